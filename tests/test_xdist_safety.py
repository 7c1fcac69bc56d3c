"""What makes the suite safe under pytest-xdist (``-n N --dist loadfile``): one shared demo per session,
read-only, and the files that read it kept on one worker (tests/_demo_session.py, conftest)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import _demo_session as ds
import conftest


class _Factory:
    """The part of ``tmp_path_factory`` the demo uses, for one xdist worker under a shared session folder."""

    def __init__(self, session: Path, worker: str):
        self.base = session / f"popen-{worker}"
        self.base.mkdir(parents=True)

    def getbasetemp(self) -> Path:
        return self.base

    def mktemp(self, name: str) -> Path:
        path = self.base / name
        path.mkdir()
        return path


def _fake_build(calls: list):
    def build(factory):
        calls.append(factory.getbasetemp().name)
        work = factory.mktemp("wheel-demo") / "elsewhere"
        (work / "demo_out").mkdir(parents=True)
        return ds.DemoSession(work / "w.whl", work / "venv", work.parent, work, "stopped", ["hub"], "Next, offline")
    return build


def test_two_workers_share_one_demo_build(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(ds, "run_demo_session", _fake_build(calls))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    got = {}
    workers = [threading.Thread(target=lambda w=w: got.setdefault(w, ds.shared_demo_session(_Factory(tmp_path, w))))
               for w in ("gw0", "gw1")]
    for t in workers:
        t.start()
    for t in workers:
        t.join(60)
    assert len(calls) == 1, calls                       # built once, under the lock
    assert got["gw0"] == got["gw1"] and got["gw0"].out.is_dir()
    assert isinstance(got["gw1"].work, Path) and got["gw1"].no_eval_left == ["hub"]


def test_a_failed_build_leaves_no_record(tmp_path, monkeypatch):
    def broken(factory):
        raise AssertionError("demo failed")
    monkeypatch.setattr(ds, "run_demo_session", broken)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    with pytest.raises(AssertionError, match="demo failed"):
        ds.shared_demo_session(_Factory(tmp_path, "gw0"))
    assert not (tmp_path / "demo-session.json").exists()   # the next worker builds (and fails) on its own


def test_without_xdist_the_demo_is_built_in_place(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(ds, "run_demo_session", _fake_build(calls))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    ds.shared_demo_session(_Factory(tmp_path, "gw0"))
    ds.shared_demo_session(_Factory(tmp_path, "gw1"))
    assert len(calls) == 2 and not (tmp_path / "demo-session.json").exists()


@pytest.mark.parametrize("clobber", ["rewrite", "add", "remove", "link"])
def test_a_test_that_writes_into_the_shared_demo_fails(tmp_path, clobber):
    out = tmp_path / "demo_out"
    (out / "report").mkdir(parents=True)
    (out / "report" / "report.md").write_text("demo report\n")
    with ds.unchanged(tmp_path):                # nothing written: no failure
        (out / "report" / "report.md").read_text()
    with pytest.raises(pytest.fail.Exception, match="wrote into the session's shared demo"):
        with ds.unchanged(tmp_path):
            if clobber == "rewrite":
                (out / "report" / "report.md").write_text("another worker's report, longer\n")
            elif clobber == "add":
                (out / "report" / "extra.png").write_bytes(b"x")
            elif clobber == "remove":
                (out / "report" / "report.md").unlink()
            else:
                (out / "plots").symlink_to(tmp_path)


def test_loadfile_keeps_the_demo_readers_on_one_worker():
    pytest.importorskip("xdist")
    sched = conftest.load_file_groups_scheduler()
    split = sched.__new__(sched)._split_scope
    assert split("tests/test_wheel.py::test_a") == split("tests/test_docs_run.py::test_b[README.md]")
    assert split("tests/test_render.py::test_c") == "tests/test_render.py"
    assert split("tests/test_render.py::Cls::test_d[x]") == "tests/test_render.py"
    for path in conftest.XDIST_FILE_GROUPS:      # a renamed file would silently fall out of its group
        assert (Path(__file__).parents[1] / path).is_file(), path


def test_the_longest_unit_is_handed_out_first():
    pytest.importorskip("xdist")
    from collections import OrderedDict

    cls = conftest.load_file_groups_scheduler()
    sched = cls.__new__(cls)
    sent = []
    node = type("Node", (), {"send_runtest_some": lambda self, idx: sent.append(idx)})()
    ids = ["tests/test_a.py::t1", "tests/test_a.py::t2", "tests/test_a.py::t3", "tests/test_wheel.py::t",
           "tests/test_docs_run.py::t"]
    sched.workqueue = OrderedDict()
    for nodeid in ids:                                  # xdist's order: the unit with the most tests first
        sched.workqueue.setdefault(sched._split_scope(nodeid), {})[nodeid] = False
    sched.assigned_work, sched.registered_collections = {}, {node: ids}
    sched._assign_work_unit(node)
    assert sent == [[3, 4]] and list(sched.workqueue) == ["tests/test_a.py"]


def test_the_long_units_come_first_in_their_order():
    """Every unit of ``XDIST_FIRST`` exists (a renamed file would silently fall back to xdist's order) and
    they are handed out in the listed order, before any other, whatever their number of tests."""
    pytest.importorskip("xdist")
    from collections import OrderedDict

    root = Path(__file__).parents[1]
    groups = set(conftest.XDIST_FILE_GROUPS.values())
    assert all(unit in groups or (root / unit).is_file() for unit in conftest.XDIST_FIRST), conftest.XDIST_FIRST
    assert len(set(conftest.XDIST_FIRST)) == len(conftest.XDIST_FIRST)
    cls = conftest.load_file_groups_scheduler()
    sched = cls.__new__(cls)
    sent = []
    node = type("Node", (), {"send_runtest_some": lambda self, idx: sent.append(idx)})()
    first, second = conftest.XDIST_FIRST[1:3]
    ids = [f"tests/test_many.py::t{i}" for i in range(5)] + [f"{second}::a", f"{second}::b", f"{first}::a",
                                                              "tests/test_docs_run.py::t"]
    sched.workqueue = OrderedDict()
    for nodeid in ids:                                  # xdist's order: the unit with the most tests first
        sched.workqueue.setdefault(sched._split_scope(nodeid), {})[nodeid] = False
    sched.assigned_work, sched.registered_collections = {}, {node: ids}
    for _ in range(4):
        sched._assign_work_unit(node)
    assert sent == [[8], [7], [5, 6], [0, 1, 2, 3, 4]]   # the demo readers, then the listed files in order
