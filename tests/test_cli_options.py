"""The command-line pieces the analysis commands share (analysis/cli_options.py) and the sample-log step of the
report's readers (analysis.report.loading.logged_samples)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from analysis.cli_options import OPTIONS, add_command, add_option, add_options, comma_list, ordered_subset
from vocalgrad_commands import cli

ROOT = Path(__file__).resolve().parents[1]
MODEL_COMMANDS = ("probe", "finetune", "align", "transfer")


def _subparsers():
    return argparse.ArgumentParser(prog="vocalgrad").add_subparsers(dest="command")


def test_command_errors_end_in_one_line_and_status_2(capsys):
    sub = _subparsers()

    def run(args):
        if args.x == "bad":
            raise ValueError("--x must not be bad")
        if args.x == "crash":
            raise KeyError("bug")
        return 0

    def call(parser, *argv):
        args = parser.parse_args(list(argv))
        return args.func(args)

    p = add_command(sub, "demo-x", run, help="h", description="d")
    p.add_argument("--x")
    assert call(p, "--x", "ok") == 0
    assert capsys.readouterr().err == ""
    assert call(p, "--x", "bad") == 2
    assert capsys.readouterr().err == "vocalgrad demo-x: error: --x must not be bad\n"
    with pytest.raises(KeyError):               # not an input error: a traceback, as before
        call(p, "--x", "crash")

    def fails(args):
        raise RuntimeError("boom")

    narrow = add_command(sub, "demo-y", fails, help="h", description="d", errors=(ValueError,))
    with pytest.raises(RuntimeError, match="boom"):
        call(narrow)


def test_triple_quoted_descriptions_are_wrapped_as_one_paragraph():
    text = cli.build_parser()._subparsers._group_actions[0].choices["align"].format_help()
    description = text.split("\n\n")[1]
    assert description.startswith("Pair increase/decrease")
    assert all(line == line.strip() for line in description.splitlines())  # no source indentation on screen
    body = " ".join(description.split())
    assert ("Pair increase/decrease test clips with the same source, tier and trajectory, average the differences "
            "of the final-position hidden states per source and then over sources, and report the cosine of every "
            "category pair per layer, for a base model or an adapter. See docs/finetune.md.") in body


def test_shared_options_keep_one_definition_in_every_command():
    parsers = cli.build_parser()._subparsers._group_actions[0].choices
    reworded = {("probe", "--device"), ("probe", "--dtype"), ("probe", "--adapter"), ("probe", "--model"),
                ("finetune", "--model")}
    seen = set()
    for name in MODEL_COMMANDS:
        for action in parsers[name]._actions:
            flag = action.option_strings[0] if action.option_strings else None
            if flag not in OPTIONS or (name == "finetune" and flag == "--batch-size"):
                continue  # finetune's --batch-size is its micro-batch, its own option
            seen.add(flag)
            if (name, flag) not in reworded:
                assert action.help == OPTIONS[flag]["help"], (name, flag)
            store_true = OPTIONS[flag].get("action") == "store_true"
            assert action.default == (False if store_true else OPTIONS[flag].get("default")), (name, flag)
    assert seen == set(OPTIONS)
    # and no analysis module spells one of them out again
    spelled = []
    for path in sorted((ROOT / "analysis").rglob("*.py")):
        for flag in OPTIONS:
            if flag == "--batch-size" and path.name == "cli.py" and path.parent.name == "finetune":
                continue
            if re.search(r"add_argument\(\s*" + re.escape(json.dumps(flag)), path.read_text()):
                spelled.append(f"{path.relative_to(ROOT)} {flag}")
    assert spelled == []


def test_add_option_changes_only_what_it_is_given():
    p = argparse.ArgumentParser()
    add_option(p, "--model", required=False, help="other words")
    add_options(p, "--batch-size", "--quiet")
    a = p.parse_args(["--batch-size", "3"])
    assert (a.model, a.batch_size, a.quiet) == (None, 3, False)
    model = next(x for x in p._actions if x.dest == "model")
    assert (model.metavar, model.help, model.required) == ("HF_ID_OR_PATH", "other words", False)
    with pytest.raises(KeyError):
        add_option(p, "--no-such-option")


def test_comma_list_and_ordered_subset():
    assert comma_list(" a, b,,c ") == ["a", "b", "c"]
    assert comma_list(None) is None and comma_list("") is None
    assert ordered_subset("c, a,a", ("a", "b", "c"), "letter") == ["a", "c"]
    assert ordered_subset(["b"], ("a", "b"), "letter") == ["b"]
    with pytest.raises(ValueError, match=r"unknown letter\(s\) \['z'\]; choose from a, b"):
        ordered_subset("a,z", ("a", "b"), "letter")
    with pytest.raises(ValueError, match=r"unknown letter\(s\) \[\]"):
        ordered_subset(" , ", ("a", "b"), "letter")


def test_logged_samples_decode_the_record_once_for_every_reader(tmp_path):
    from analysis.report.loading import ResultsError, logged_samples

    log = tmp_path / "samples_vocalgrad_pitch_x.jsonl"
    lines = [{"doc": {"id": "c1"}, "resps": [["more"]], "acc_parsed": "increase:decrease:parsed:other"},
             {"filtered_resps": ["up"], "acc_parsed": {"direction": "increase", "status": "parsed"}},
             {"doc": {"id": "c3"}, "resps": [], "acc_parsed": 3}]
    log.write_text("\n".join(json.dumps(x) for x in lines[:2]) + "\n\n" + json.dumps(lines[2]) + "\n")
    got = list(logged_samples(log, "acc_parsed"))
    assert [s.lineno for s in got] == [1, 2, 4]           # the blank line is skipped, numbers stay the file's
    assert got[0].doc == {"id": "c1"} and got[0].raw == "more"
    assert got[0].logged == {"direction": "increase", "pred": "decrease", "status": "parsed", "exact": False,
                             "retried": False}
    assert got[1].doc == {} and got[1].raw == "up" and got[1].logged is None   # dicts only when asked
    assert got[2].raw is None and got[2].logged is None and got[2].line == lines[2]
    legacy = list(logged_samples(log, "acc_parsed", dicts=True))
    assert legacy[1].logged == {"direction": "increase", "status": "parsed"}
    assert list(logged_samples(log, "macro_f1"))[0].logged is None            # another metric's key

    log.write_text(json.dumps({"acc_parsed": "increase:up"}) + "\n")
    with pytest.raises(ResultsError, match=r"samples_vocalgrad_pitch_x\.jsonl:1: not a VocalGrad record code"):
        list(logged_samples(log, "acc_parsed"))
