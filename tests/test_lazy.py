"""Deferred imports (playpen.lazy): a play does not execute what it does not use, and what was deferred
works when used. Each check runs in a fresh interpreter, since this test process has imported everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from playpen.registry import GAMES_DIR

# Never needed by a play with the expert (or an API model): executing any of them costs start-up time.
HEAVY = ("gradio", "torch", "transformers", "trl", "datasets", "peft", "scipy", "sklearn", "pandas")


def run_python(code: str, cwd: Path, **env: str) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON object last."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_wordle_instance(folder: Path) -> Path:
    data = json.loads((GAMES_DIR / "wordle" / "in" / "instances.json").read_text())
    experiment = data["experiments"][0]
    path = folder / "one.json"
    path.write_text(json.dumps({"experiments": [{**experiment, "game_instances": experiment["game_instances"][:1]}]}))
    return path


def test_an_expert_play_executes_no_heavy_module(tmp_path):
    """`playpen play -m expert` records its episode without executing gradio (openenv's web UI), nltk
    (with scipy and scikit-learn below it), torch or transformers: an eager import of any of them fails here."""
    instances = one_wordle_instance(tmp_path)
    state = run_python(f"""
        import json, sys
        from playpen.cli import main
        main(["play", "-g", "wordle", "-m", "expert", "-i", {str(instances)!r}, "-r", "results"])
        print(json.dumps({{"loaded": [m for m in {HEAVY!r} if m in sys.modules],
                          "nltk": type(sys.modules.get("nltk")).__name__,
                          "nltk_executed": "nltk.featstruct" in sys.modules}}))
    """, tmp_path)
    assert len(list((tmp_path / "results").rglob("interactions.json"))) == 1
    assert state == {"loaded": [], "nltk": "_LazyModule", "nltk_executed": False}


def test_nltk_executes_on_first_use(tmp_path):
    """clemcore's model-spec matching (nltk's unification) and a game's stemmer work with nltk deferred."""
    state = run_python("""
        import json, sys
        from playpen.registry import resolve_model_spec  # first: importing playpen installs the finder
        import clemcore.backends
        before = type(sys.modules["nltk"]).__name__
        spec = resolve_model_spec("smol-135m")  # the registry's entries are matched by nltk's unification
        from nltk.stem import SnowballStemmer
        print(json.dumps({"before": before, "after": type(sys.modules["nltk"]).__name__,
                          "backend": spec.backend, "stem": SnowballStemmer("english").stem("running")}))
    """, tmp_path)
    assert state == {"before": "_LazyModule", "after": "module", "backend": "huggingface_local", "stem": "run"}


def test_a_deferred_package_executes_once_whatever_touches_it_first(tmp_path):
    """Importing it again does not execute it; importing a submodule first executes the package, and the
    submodule once (CPython 3.11 alone would execute such a submodule a second time)."""
    package = tmp_path / "dpkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("import builtins\nbuiltins.RUNS.append('dpkg')\nfrom dpkg.sub import VALUE\n")
    (package / "sub" / "__init__.py").write_text("import builtins\nbuiltins.RUNS.append('dpkg.sub')\nVALUE = object()\n")
    state = run_python("""
        import builtins, json, sys
        from playpen.lazy import DeferringFinder
        builtins.RUNS = []
        sys.path.insert(0, ".")
        sys.meta_path.insert(0, DeferringFinder(deferred=("dpkg",), optional_at_import={}))
        import dpkg
        import dpkg as again
        untouched = list(builtins.RUNS)
        from dpkg.sub import VALUE
        print(json.dumps({"untouched": untouched, "runs": builtins.RUNS, "same": VALUE is dpkg.VALUE,
                          "loader": type(sys.modules["dpkg.sub"].__spec__.loader).__name__,
                          "package_loader": type(dpkg.__loader__).__name__}))
    """, tmp_path)
    assert state == {"untouched": [], "runs": ["dpkg", "dpkg.sub"], "same": True, "loader": "SourceFileLoader",
                     "package_loader": "SourceFileLoader"}


def test_an_optional_module_is_left_out_of_its_package_import_only_where_the_package_allows_it(tmp_path):
    """Declined while the package imports it in `try ... except ModuleNotFoundError`, importable afterwards; a
    package that imports it unguarded (a later release) gets it."""
    for name, body in (("guarded", "try:\n    from .ui import show\nexcept ModuleNotFoundError:\n    show = None\n"),
                       ("unguarded", "from .ui import show\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
        (tmp_path / name / "ui.py").write_text(f"import builtins\nbuiltins.RUNS.append('{name}.ui')\nshow = print\n")
    state = run_python("""
        import builtins, json, sys
        from playpen.lazy import DeferringFinder
        builtins.RUNS = []
        sys.path.insert(0, ".")
        sys.meta_path.insert(0, DeferringFinder(deferred=(), optional_at_import={"guarded.ui": "guarded",
                                                                               "unguarded.ui": "unguarded"}))
        import guarded, unguarded
        at_import = {"runs": list(builtins.RUNS), "guarded": guarded.show is None, "unguarded": unguarded.show is print}
        from guarded.ui import show
        print(json.dumps({**at_import, "later": builtins.RUNS, "show": show is print}))
    """, tmp_path)
    assert state == {"runs": ["unguarded.ui"], "guarded": True, "unguarded": True,
                     "later": ["unguarded.ui", "guarded.ui"], "show": True}


def test_threads_touching_a_deferred_package_at_once_see_it_executed_once(tmp_path):
    (tmp_path / "slowpkg.py").write_text("import builtins, time\nbuiltins.RUNS.append('slowpkg')\ntime.sleep(0.3)\n"
                                         "VALUE = object()\n")
    state = run_python("""
        import builtins, json, sys, threading
        from playpen.lazy import DeferringFinder
        builtins.RUNS = []
        sys.path.insert(0, ".")
        sys.meta_path.insert(0, DeferringFinder(deferred=("slowpkg",), optional_at_import={}))
        import slowpkg
        seen = []
        def touch():
            try:
                seen.append(id(slowpkg.VALUE))
            except AttributeError as e:  # a half-executed module
                seen.append(str(e))
        threads = [threading.Thread(target=touch) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(json.dumps({"runs": builtins.RUNS, "seen": len(seen), "same": set(seen) == {id(slowpkg.VALUE)}}))
    """, tmp_path)
    assert state == {"runs": ["slowpkg"], "seen": 4, "same": True}


def test_eager_imports_can_be_asked_for(tmp_path):
    state = run_python("""
        import json, sys
        import playpen, clemcore.backends
        print(json.dumps({"nltk": type(sys.modules["nltk"]).__name__}))
    """, tmp_path, PLAYPEN_EAGER_IMPORTS="1")
    assert state == {"nltk": "module"}


@pytest.mark.slow
def test_openenv_serves_its_web_ui_when_asked_in_a_playpen_process(tmp_path):
    """clemcore's OpenEnv app with ENABLE_WEB_INTERFACE: the web UI (gradio) is imported then, and served."""
    (tmp_path / "game_registry.json").write_text(json.dumps([{"benchmark_path": str(GAMES_DIR)}]))
    state = run_python("""
        import json, sys
        import playpen, clemcore.clemgame
        import openenv.core.env_server as server
        before = {"gradio": "gradio" in sys.modules, "web_ui": server.create_web_interface_app is not None}
        from clemcore.clemgame.envs.openenv.server.app import create_clemv_app
        from fastapi.testclient import TestClient
        app = create_clemv_app("wordle_withcritic", learner_agent="player_0", env_agents={"player_1": "mock"},
                               results_dir="records")
        page = TestClient(app).get("/web/")
        print(json.dumps({"before": before, "gradio": "gradio" in sys.modules, "status": page.status_code,
                          "html": "<html" in page.text.lower()}))
    """, tmp_path, ENABLE_WEB_INTERFACE="true")
    assert state == {"before": {"gradio": False, "web_ui": False}, "gradio": True, "status": 200, "html": True}
