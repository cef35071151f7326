"""The web app of `playpen view`: starlette routes rendering jinja2 templates, served by uvicorn.

Every page is built from the Index (episodes found below the given folders); a request names an episode by
its id and gets a 404 unless that id was indexed, so no path a request makes up (`../../etc/passwd`, encoded
or not) reaches the disk. The app only reads.
"""

from __future__ import annotations

import math
import socket
from pathlib import Path
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse
from starlette.routing import Route

from playpen.errors import PlaypenError
from playpen.view.episode import episode_files, read_dialogue
from playpen.view.index import OUTCOMES, Episode, Index
from playpen.view.plot import line_chart

PAGE_SIZE = 100
FILTERS = ("game", "experiment", "model", "outcome", "run", "step")
TEMPLATES = Path(__file__).parent / "templates"


def _number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def create_app(index: Index) -> Starlette:
    """The viewer's app over an index (tests drive it directly; `serve` runs it)."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
    env.filters["number"] = _number

    def render(name: str, **context) -> HTMLResponse:
        return HTMLResponse(env.get_template(name).render(roots=[str(r) for r in index.roots], **context))

    def episode_or_404(episode_id: str) -> Episode:
        episode = index.get(episode_id)
        if episode is None:
            raise HTTPException(404, "no such episode")
        return episode

    async def listing(request: Request) -> HTMLResponse:
        query = request.query_params
        chosen = {key: query.get(key, "") for key in FILTERS}
        step = int(chosen["step"]) if chosen["step"].isdigit() else None
        if chosen["outcome"] and chosen["outcome"] not in OUTCOMES:
            chosen["outcome"] = ""
        sort = query.get("sort", "")
        descending = query.get("order", "desc") != "asc"
        found = index.select(game=chosen["game"], experiment=chosen["experiment"], model=chosen["model"],
                             outcome=chosen["outcome"], run=chosen["run"], step=step, sort=sort,
                             descending=descending)
        pages = max(1, math.ceil(len(found) / PAGE_SIZE))
        page = min(max(int(query.get("page", "1")) if query.get("page", "1").isdigit() else 1, 1), pages)

        def link(**changes) -> str:
            params = {**{k: v for k, v in chosen.items() if v}, "sort": sort,
                      "order": "desc" if descending else "asc", "page": page, **changes}
            return "/?" + urlencode({k: v for k, v in params.items() if v not in ("", None)})

        choices = index.choices()
        runs = [{"run": run, "label": index.run_label(run)} for run in choices["run"]]
        return render("list.html", episodes=found[(page - 1) * PAGE_SIZE: page * PAGE_SIZE], total=len(found),
                      all_count=len(index.episodes), choices=choices, chosen=chosen, sort=sort,
                      descending=descending, page=page, pages=pages, link=link, runs=runs,
                      run_label=index.run_label)

    async def episode_page(request: Request) -> HTMLResponse:
        episode = episode_or_404(request.path_params["id"])
        return render("episode.html", e=episode, d=read_dialogue(episode), others=index.same_instance(episode),
                      run_label=index.run_label)

    async def compare(request: Request) -> HTMLResponse:
        pair = [episode_or_404(request.query_params.get(key, "")) for key in ("a", "b")]
        return render("compare.html", pair=[(e, read_dialogue(e)) for e in pair], run_label=index.run_label)

    async def run_page(request: Request) -> HTMLResponse:
        run = request.path_params["run"]
        if run not in index.refresh().choices()["run"]:
            raise HTTPException(404, "no such training run")
        curve = index.run_curve(run)
        link = "/?" + urlencode({"run": run}) + "&step="
        reward = line_chart("mean reward per step", [
            (p["step"], p["reward"], f"{link}{p['step']}",
             f"step {p['step']}: mean reward {p['reward']:.3f} over {p['episodes']} episodes") for p in curve],
            css_class="reward")
        aborted = line_chart("share of aborted episodes per step", [
            (p["step"], p["aborted"], f"{link}{p['step']}&outcome=aborted",
             f"step {p['step']}: {100 * p['aborted']:.0f}% of {p['episodes']} episodes aborted") for p in curve],
            low=0.0, high=1.0, percent=True, css_class="aborted")
        return render("run.html", run=run, label=index.run_label(run), curve=curve, reward_svg=reward,
                      aborted_svg=aborted, recorded=all(p["recorded"] for p in curve))

    async def episode_file(request: Request) -> FileResponse:
        """One file of an indexed episode folder, by name (the raw JSON, clemcore's transcript.html)."""
        episode_id, _, name = request.path_params["path"].rpartition("/")
        episode = episode_or_404(episode_id)
        if name not in episode_files(episode.path):
            raise HTTPException(404, "no such file")
        kind = "text/html" if name.endswith(".html") else "text/plain; charset=utf-8"
        return FileResponse(episode.path / name, media_type=kind)

    return Starlette(routes=[
        Route("/", listing),
        Route("/episode/{id:path}", episode_page),
        Route("/compare", compare),
        Route("/run/{run:path}", run_page),
        Route("/file/{path:path}", episode_file),
    ])


def serve(dirs: list[str], host: str = "127.0.0.1", port: int = 0) -> None:
    """Index the folders, bind (port 0: a free one), print the address and serve until Ctrl-C."""
    import time

    import uvicorn

    if not 0 <= port <= 65535:
        raise PlaypenError(f"--port {port}: choose 1-65535, or 0 for a free one")
    started = time.perf_counter()
    index = Index(dirs).refresh(force=True)
    print(f"{len(index.episodes)} episodes in {', '.join(dirs)} (indexed in {time.perf_counter() - started:.2f}s)")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait from the moment the address is printed
    except OSError as e:
        raise PlaypenError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"Playpen view: http://{shown}:{bound}/  (Ctrl-C to stop)", flush=True)
    config = uvicorn.Config(create_app(index), log_level="warning")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shuts down on Ctrl-C, then raises it again
        pass
    print("Playpen view stopped")
