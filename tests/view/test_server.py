"""The viewer's pages through the app, and `playpen view` as a running server: filters, an episode, side by
side, a training run's plot; paths outside the folders refused; nothing written into the folders."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from playpen.view.index import Index
from tests.view.conftest import RUN

pytestmark = pytest.mark.slow  # uses the folders of tests/view/conftest.py

TRAVERSALS = ["/episode/../../etc/passwd", "/episode/0/..%2F..%2F..%2Fetc%2Fpasswd",
              "/episode/%2e%2e/%2e%2e/etc/passwd", "/file/../../../../etc/passwd",
              "/file/0/expert/wordle/x/..%2F..%2F..%2F..%2F..%2F..%2Fetc/passwd", "/run/../../etc",
              "/episode/0%2F..%2F..%2Fexpert/run.json", "/compare?a=../../etc/passwd&b=0"]


@pytest.fixture(scope="module")
def client(view_folders):
    from starlette.testclient import TestClient

    from playpen.view.server import create_app

    return TestClient(create_app(Index([view_folders["results"], view_folders["records"]])))


def rows(html: str) -> list[str]:
    return re.findall(r'<tr class="episode-row" data-outcome="(\w+)"', html)


def test_the_list_filters_and_sorts(client):
    page = client.get("/")
    assert page.status_code == 200 and len(rows(page.text)) == 62 and "62 of 62 episodes" in page.text
    aborted = client.get("/", params={"outcome": "aborted"}).text
    assert rows(aborted) == ["aborted"] * 12
    step = client.get("/", params={"run": f"1/grpo/tiny/{RUN}", "step": "1"}).text
    assert sorted(rows(step)) == ["aborted"] * 4 + ["success"] * 4
    lengths = [int(x) for x in re.findall(r'class="num length">(\d+)<', client.get("/?sort=length&order=asc").text)]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]
    assert rows(client.get("/", params={"game": "wordle", "outcome": "aborted"}).text) == []


def test_an_episode_page_shows_the_dialogue_and_links_the_same_instance(client):
    listing = client.get("/", params={"model": "human--expert", "run": ""}).text
    first = re.search(r'href="/episode/(0/[^"]+)"', listing).group(1)
    page = client.get(f"/episode/{first}").text
    assert "Instruction Giver · human" in page and "nonsense" in page and "event answer problem" in page
    compare = re.search(r'class="compare-link" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    side = client.get(compare)
    assert side.status_code == 200 and side.text.count('class="side"') == 2
    assert "human--expert" in side.text and "expert" in side.text
    raw = client.get(f"/file/{first}/scores.json")
    assert raw.status_code == 200 and raw.json()["episode scores"]["Aborted"] == 1


def test_a_training_runs_plot_links_each_step(client):
    page = client.get(f"/run/1/grpo/tiny/{RUN}").text
    assert page.count("<svg") == 2
    for step in (0, 1, 2):
        assert f'href="/?run=1%2Fgrpo%2Ftiny%2F{RUN}&amp;step={step}"' in page
    assert client.get("/run/1/grpo/tiny/run-nothing").status_code == 404


@pytest.mark.parametrize("path", TRAVERSALS)
def test_paths_outside_the_folders_are_404(client, path):
    response = client.get(path)
    assert response.status_code == 404 and "root:" not in response.text


def snapshot(folder: Path) -> dict:
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def start_view(*folders: Path) -> tuple[subprocess.Popen, str]:
    """`playpen view -r FOLDER...` started on a free port, and the address it printed."""
    process = subprocess.Popen([sys.executable, "-m", "playpen", "view", "-r", *map(str, folders)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=Path(__file__).resolve().parents[2])
    printed = []
    for line in process.stdout:
        printed.append(line)
        if found := re.search(r"(http://127\.0\.0\.1:\d+/)", line):
            return process, found.group(1)
    process.wait()
    pytest.fail("playpen view printed no address:\n" + "".join(printed))


@pytest.fixture(scope="module")
def server(view_folders):
    """`playpen view` running on a free port; its address."""
    before = snapshot(view_folders["root"])
    process, address = start_view(view_folders["results"], view_folders["records"])
    yield address
    process.terminate()
    process.wait(timeout=20)
    assert snapshot(view_folders["root"]) == before  # served, browsed: nothing written into the folders


def raw_get(url: str, path: str) -> str:
    """A request sent as written (an HTTP client would normalise the dots away)."""
    address = urlparse(url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {address.netloc}\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def test_the_command_serves_on_localhost_and_refuses_traversal(server):
    assert raw_get(server, "/").startswith("HTTP/1.1 200")
    for path in TRAVERSALS + ["/../../../../etc/passwd", "/file/0/../../../../../../etc/passwd"]:
        answer = raw_get(server, path)
        assert answer.startswith("HTTP/1.1 404") and "root:x:" not in answer, path


def test_ctrl_c_stops_the_server_without_a_traceback(view_folders):
    process, address = start_view(view_folders["results"])
    assert raw_get(address, "/").startswith("HTTP/1.1 200")
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in out and "Playpen view stopped" in out
