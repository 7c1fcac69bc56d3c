"""Input checks on sources (issues 28 and 37): anomalous audio files, symbolic links, metadata CSVs.

Each test is one case that once ended in a traceback, a silent wrong result or an unclear message,
and checks what happens now: a skip with its reason in skipped.csv, a warning, a one-line refusal, or a
correct read. Split from tests/test_faults_inputs.py (numeric and list options, damaged files, commands).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests._sources_helpers import speech_like as _speech_like
from vocalgrad_commands.cli import main

SR = 48000

# ------------------------------------------------------------------------------------------ sources
@pytest.fixture(scope="module")
def odd_sources(tmp_path_factory):
    """A folder of one normal source and every anomaly, rendered once (volume, one job)."""
    from generation.render import render

    root = tmp_path_factory.mktemp("odd")
    src = root / "src"
    src.mkdir()
    y = _speech_like()
    sf.write(src / "normal.wav", y, SR, subtype="PCM_16")
    sf.write(src / "dc.wav", y + 0.1, SR, subtype="PCM_16")
    sf.write(src / "inverted.wav", np.stack([y, -y], 1), SR, subtype="PCM_16")
    sf.write(src / "quiet.wav", np.random.default_rng(0).standard_normal(len(y)) * 10 ** (-90 / 20), SR,
             subtype="FLOAT")
    sf.write(src / "trunc.wav", np.tile(y, 3), SR, subtype="PCM_16")       # header 4.5 s, then cut to half
    data = (src / "trunc.wav").read_bytes()
    (src / "trunc.wav").write_bytes(data[: 44 + (len(data) - 44) // 2])
    os.symlink(src / "gone.wav", src / "dangling.wav")
    os.symlink("self.wav", src / "self.wav")                     # a self-link, and a cycle of two links
    os.symlink("loop_b.wav", src / "loop_a.wav")
    os.symlink("loop_a.wav", src / "loop_b.wav")
    with pytest.warns(UserWarning) as caught:
        s = render(f"folder:{src}", root / "out", categories=["volume"], jobs=1, progress=False)
    return root / "out", s, [str(w.message) for w in caught]


def _skipped(out: Path) -> dict:
    with open(out / "skipped.csv", newline="") as fh:
        return {r["source_id"]: r["reason"] for r in csv.DictReader(fh)}


def test_a_dangling_symlink_is_listed_in_skipped_csv(odd_sources):
    out, _, _ = odd_sources
    assert _skipped(out)["dangling"].endswith("dangling.wav: broken symbolic link (to "
                                              f"{out.parent / 'src' / 'gone.wav'}, which does not exist)")


def test_symlink_loops_in_a_folder_source_are_skipped_with_their_reason(odd_sources):
    """A self-link and a two-link cycle: skipped, the reason in skipped.csv (was: RuntimeError: Symlink loop)."""
    out, s, _ = odd_sources
    skipped = _skipped(out)
    for sid, target in (("self", "self.wav"), ("loop_a", "loop_b.wav"), ("loop_b", "loop_a.wav")):
        assert skipped[sid].endswith(f"{sid}.wav: symbolic link loop (to {target}, which leads back to itself); "
                                     "point the link at an audio file or remove it")
    assert (out / "manifest.parquet").is_file()


@pytest.mark.parametrize("cmd", ["render", "hub"])
def test_an_out_that_is_a_symlink_loop_is_refused_in_one_line(cmd, odd_sources, tmp_path, capsys):
    os.symlink("loop", tmp_path / "loop")
    out = tmp_path / "loop"
    argv = (["render", "--source", "tones", "--sources", "1", "--categories", "volume", "--out", str(out)]
            if cmd == "render" else ["hub", str(odd_sources[0]), "--out", str(out / "hub")])
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out} is a symbolic link loop ({out} -> loop leads back to itself)" in err[0]
    assert os.readlink(out) == "loop"


def test_a_truncated_wav_is_skipped_naming_both_durations(odd_sources):
    out, _, _ = odd_sources
    assert _skipped(out)["trunc"].startswith("truncated file: its header announces 4.50 s of audio, the file holds "
                                             "2.25 s")


def test_a_near_silent_source_is_skipped(odd_sources):
    out, _, _ = odd_sources
    assert _skipped(out)["quiet"].startswith("near-silent audio (peak -7")
    assert "below -60 dBFS" in _skipped(out)["quiet"]


def test_a_stereo_source_with_one_inverted_channel_is_named_as_such(odd_sources):
    out, _, _ = odd_sources
    reason = _skipped(out)["inverted"]
    assert reason.startswith("its 2 channels (peaks -10.5, -10.5 dBFS) cancel when averaged to mono (")
    assert "channel 2 is channel 1 phase-inverted; keep one channel" in reason


def test_a_dc_offset_does_not_move_the_speech_span_and_is_warned(odd_sources):
    import pyarrow.parquet as pq

    out, summary, said = odd_sources
    assert summary.clips_rendered == 48 and sorted(dict(summary.skipped)) == ["dangling", "inverted", "loop_a", "loop_b",
                                                                                    "quiet", "self", "trunc"]
    rows = pq.read_table(out / "manifest.parquet").to_pylist()
    spans = {(r["source_id"], r["source_onset_sec"], r["source_offset_sec"], r["speech_found"]) for r in rows}
    assert len(spans) == 2 and {s[1:] for s in spans} == {(0.25, 1.26, True)}  # dc as normal (was: a shrunken span)
    assert any("1 source(s) rendered with a note, e.g. dc" in w and "DC offset +0.100" in w for w in said)


def test_span_detection_of_a_normal_source_is_unchanged_by_the_dc_rule():
    from generation.source_checks import DC_OFFSET_LIMIT, without_dc
    from generation.span import detect_span

    y = _speech_like()
    assert abs(np.mean(y)) < DC_OFFSET_LIMIT / 10 and without_dc(y) is y     # a normal source: untouched
    base = detect_span(y, SR)
    assert detect_span(without_dc(y + 0.1), SR) == base and detect_span(without_dc(y - 0.3), SR) == base
    assert detect_span(y + 0.1, SR) != base                                    # what the offset did before


def test_metadata_with_an_unterminated_quote_names_the_line(tmp_path):
    from generation.sources import SourceSpecError, read_sources

    sf.write(tmp_path / "a.wav", _speech_like(), SR)
    sf.write(tmp_path / "b.wav", _speech_like(), SR)
    (tmp_path / "metadata.csv").write_text('file_name,text\na.wav,"hello there\nb.wav,good morning\n')
    with pytest.raises(SourceSpecError) as err:
        read_sources(f"folder:{tmp_path}")
    assert str(err.value).startswith(f"{tmp_path / 'metadata.csv'}, line 2: the quoted text field opened there runs "
                                     "on to line 3 (an unterminated quote")


def test_metadata_with_a_closed_quoted_field_over_two_lines_is_read(tmp_path):
    """What Python's csv module reads is accepted (was: refused as an unterminated quote)."""
    from generation.sources import read_sources

    sf.write(tmp_path / "a.wav", _speech_like(), SR)
    sf.write(tmp_path / "b.wav", _speech_like(), SR)
    (tmp_path / "metadata.csv").write_text('file_name,text\na.wav,"hello, ""world""\nline2"\nb.wav,good morning\n')
    items = read_sources(f"folder:{tmp_path}")
    assert [(it.source_id, it.text) for it in items] == [("a", 'hello, "world"\nline2'), ("b", "good morning")]


def test_metadata_file_name_that_is_a_folder(tmp_path):
    from generation.sources import SourceSpecError, read_sources

    (tmp_path / "sub").mkdir()
    (tmp_path / "metadata.csv").write_text("file_name\nsub\n")
    with pytest.raises(SourceSpecError, match=r"line 2: file_name 'sub' is a folder, not an audio file"):
        read_sources(f"folder:{tmp_path}")


def test_many_duplicate_metadata_rows_give_a_short_message(tmp_path):
    from generation.sources import SourceSpecError, read_sources

    sf.write(tmp_path / "a.wav", _speech_like(0.5, 0.0), SR)
    (tmp_path / "metadata.csv").write_text("file_name\n" + "a.wav\n" * 20_000)
    with pytest.raises(SourceSpecError) as err:
        read_sources(f"folder:{tmp_path}")
    msg = str(err.value)
    assert len(msg) < 1000 and "duplicate source ids ['a']" in msg and "and 19997 more rows" in msg
