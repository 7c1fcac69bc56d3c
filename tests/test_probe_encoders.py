"""``vocalgrad probe --encoder``: the built-in encoders on the weights their wheels ship.

Each adapter is checked against its own package: the last layer reproduces the package's output,
intermediate layers equal the package modules' outputs (forward hooks: a layer off by one
fails), a 220-Hz tone given at 48 kHz decodes to 220 Hz through the pooled features (a wrong
sample rate or random weights fail), and the output names each weights file by its SHA-256.
Clips are short (0.4 s) so that the whole file stays within about a minute on one core.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version

import numpy as np
import pytest

import _probe_helpers as ph

torch = pytest.importorskip("torch")

from analysis.probe.encoders import ENCODERS, EncoderUnavailable, get_encoder, register  # noqa: E402

SR_IN = 48000
PACKAGES = {"pesto": "pesto", "torchcrepe:tiny": "torchcrepe", "torchcrepe:full": "torchcrepe", "fcpe": "torchfcpe",
            "resemblyzer": "resemblyzer", "silero-vad": "silero_vad"}


def _tone(hz: float, seconds: float = 0.4, sr: int = SR_IN) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (0.3 * sum(np.sin(2 * np.pi * k * hz * t) / k for k in (1, 2, 3))).astype(np.float32)


# ----------------------------------------------------------------------------- registry and provenance
def test_registry_names_unknown_and_taken(tmp_path):
    assert list(ENCODERS) == ["pesto", "torchcrepe:tiny", "torchcrepe:full", "fcpe", "resemblyzer", "silero-vad"]
    with pytest.raises(ValueError, match="built in: pesto, torchcrepe:tiny"):
        get_encoder("torchcrepe:small")
    with pytest.raises(ValueError, match="unknown encoder and no such folder"):
        get_encoder(str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match="no config.json"):
        get_encoder(str(tmp_path))                      # a folder, but not a transformers one
    from generation.registry import NameTaken

    with pytest.raises(NameTaken, match="encoder name 'pesto' is taken"):
        register("pesto", lambda: None)
    assert ENCODERS["pesto"].__name__ == "_pesto"


def test_missing_package_is_one_line_with_the_install_command(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_resemblyzer(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name.split(".")[0] == "resemblyzer":
            raise ImportError("No module named 'resemblyzer'")
        return real(name, globals, locals, fromlist, level)

    import sys

    monkeypatch.delitem(sys.modules, "resemblyzer", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_resemblyzer)
    with pytest.raises(EncoderUnavailable, match=r"install it with: pip install --no-deps resemblyzer==0\.1\.4") as e:
        get_encoder("resemblyzer").load()
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", list(PACKAGES))
def test_provenance_names_the_shipped_weights_by_sha256(name):
    enc = get_encoder(name)
    try:
        files = enc.weights_files()
    except EncoderUnavailable as exc:
        pytest.skip(str(exc))
    prov = enc.provenance()
    assert prov["version"] == version(enc.distribution)
    assert [w["sha256"] for w in prov["weights"]] == [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    assert prov["weights"][0]["file"].startswith(PACKAGES[name] + "/")     # named inside the package, no site path
    assert list(prov["layers"]) == list(range(1, enc.n_layers + 1))


def test_torchaudio_placeholder_is_gone_after_import():
    import sys

    ph.loaded_encoder("torchcrepe:tiny")
    assert "torchaudio" not in sys.modules or not type(sys.modules["torchaudio"]).__name__ == "_Placeholder"


# ----------------------------------------------------------------------------- pitch trackers
def _decode_hz(name, enc, posterior: np.ndarray) -> float:
    """Frequency of the mean pitch posterior, decoded the package's way."""
    p = torch.as_tensor(posterior, dtype=torch.float32)[None]
    if name.startswith("torchcrepe"):
        return float(enc._tc.convert.bins_to_frequency(p.argmax(dim=1))[0])
    if name == "pesto":
        from pesto.utils import reduce_activations

        return float(440 * 2 ** ((reduce_activations(p, reduction="alwa")[0] - 69) / 12))
    net = enc.infer.model                                                    # fcpe
    return float(net.cent_to_f0(net.latent2cents_decoder(p[None], threshold=0.0))[0, 0, 0])


@pytest.mark.parametrize("name", ["pesto", "torchcrepe:tiny", "torchcrepe:full", "fcpe"])
@pytest.mark.parametrize("hz", [220.0, 330.0])
def test_pitch_trackers_decode_a_48k_tone_through_the_pooled_features(name, hz):
    enc = ph.loaded_encoder(name)
    last = enc.n_layers - 1                                     # the network's output (before the decoded f0)
    pooled = enc.features(_tone(hz), SR_IN, [last])[last].reshape(16, -1)
    got = _decode_hz(name, enc, pooled[2:-2].mean(axis=0))    # inner segments: no edge frames
    assert abs(1200 * np.log2(got / hz)) < 50, f"{name}: {got:.1f} Hz for a {hz} Hz tone"


def test_crepe_layers_equal_the_package_modules():
    enc = ph.loaded_encoder("torchcrepe:tiny")
    y = ph.to_16k(_tone(220.0), SR_IN)
    seqs = enc.sequences(y, list(range(1, 8)))
    got = {}
    hooks = [getattr(enc.model, f"conv{k}_BN").register_forward_hook(
        lambda m, i, o, k=k: got.__setitem__(k, torch.nn.functional.max_pool2d(o, (2, 1), (2, 1)).mean(dim=(2, 3))))
        for k in range(1, 7)]
    try:
        with torch.inference_mode():
            probs = enc.model(enc.frames(y))
    finally:
        for h in hooks:
            h.remove()
    for k in range(1, 7):
        np.testing.assert_allclose(seqs[k], got[k].numpy(), rtol=0, atol=1e-5, err_msg=f"layer {k}")
    np.testing.assert_array_equal(seqs[7], probs.numpy())
    assert [seqs[k].shape[1] for k in range(1, 8)] == [128, 16, 16, 16, 32, 64, 360]
    assert seqs[1].shape[0] == 1 + len(y) // 320                       # one frame per 20-ms hop


def test_pesto_layers_equal_the_package_modules():
    enc = ph.loaded_encoder("pesto")
    y = ph.to_16k(_tone(220.0), SR_IN)
    seqs = enc.sequences(y, list(range(1, 9)))
    e = enc.model.encoder
    mods = {1: e.conv1, 4: e.conv_layers[1], 5: e.conv_layers[4], 6: e.conv_layers[7], 7: e.conv_layers[10]}
    got = {}
    hooks = [m.register_forward_hook(lambda m, i, o, k=k: got.__setitem__(k, o.mean(dim=1))) for k, m in mods.items()]
    try:
        with torch.inference_mode():
            *_, act = enc.model(torch.as_tensor(y)[None], sr=16000)
    finally:
        for h in hooks:
            h.remove()
    for k in mods:
        np.testing.assert_allclose(seqs[k], got[k].numpy(), rtol=0, atol=1e-5, err_msg=f"layer {k}")
    np.testing.assert_allclose(seqs[8], act[0].numpy(), rtol=0, atol=1e-6)


def test_fcpe_layers_equal_the_package_modules():
    enc = ph.loaded_encoder("fcpe")
    y = ph.to_16k(_tone(220.0), SR_IN)
    seqs = enc.sequences(y, list(range(1, 9)))
    net = enc.infer.model
    got = {}
    mods = {1: net.input_stack, **{i + 2: layer for i, layer in enumerate(net.net.encoder_layers)}}
    hooks = [m.register_forward_hook(lambda m, i, o, k=k: got.__setitem__(k, o)) for k, m in mods.items()]
    try:
        with torch.inference_mode():
            latent = net(enc.infer.wav2mel(torch.as_tensor(y)[None, :, None], 16000))
    finally:
        for h in hooks:
            h.remove()
    np.testing.assert_allclose(seqs[1], got[1][0].transpose(0, 1).numpy(), rtol=0, atol=1e-5)
    for k in range(2, 8):
        np.testing.assert_allclose(seqs[k], got[k][0].numpy(), rtol=0, atol=1e-5, err_msg=f"layer {k}")
    np.testing.assert_allclose(seqs[8], latent[0].numpy(), rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------- speaker encoder, VAD
def test_resemblyzer_layers_equal_the_packaged_lstm_and_embedding():
    enc = ph.loaded_encoder("resemblyzer")
    y = ph.to_16k(_tone(220.0), SR_IN)
    seqs = enc.sequences(y, [1, 2, 3, 4])
    with torch.inference_mode():
        mel = torch.as_tensor(enc.mel(y))[None]
        full, (h_n, _) = enc.encoder.lstm(mel)
        embed = enc.encoder(mel)
    for k in (1, 2, 3):                                # h_n[k-1] is layer k's last frame
        np.testing.assert_allclose(seqs[k][-1], h_n[k - 1, 0].numpy(), rtol=0, atol=1e-6, err_msg=f"layer {k}")
    np.testing.assert_allclose(seqs[3], full[0].numpy(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(seqs[4][-1], embed[0].numpy(), rtol=0, atol=1e-6)
    assert seqs[1].shape == (1 + len(y) // 160, 256)


def test_silero_net_equals_the_packaged_torchscript_model():
    from analysis.probe.encoders.silero import chunk_clip

    enc = ph.loaded_encoder("silero-vad")
    threads = torch.get_num_threads()
    from silero_vad import load_silero_vad

    jit = load_silero_vad()
    torch.set_num_threads(threads)
    y = ph.to_16k(_tone(220.0, seconds=0.6), SR_IN) * np.linspace(0, 1, 9600, dtype=np.float32)
    seqs = enc.sequences(y, [1, 2, 3, 4, 5])
    with torch.inference_mode():
        _, prob = enc.net.steps(chunk_clip(y))
        ref = jit.audio_forward(torch.as_tensor(y), 16000)[0]          # leaves the last step's (h, c) in _state
        np.testing.assert_allclose(prob.numpy(), ref.numpy(), rtol=0, atol=1e-5)
        x = jit._model.stft(chunk_clip(y))                               # the TorchScript front end and conv blocks
        for i in range(4):
            x = getattr(jit._model.encoder, str(i))(x)
            np.testing.assert_allclose(seqs[i + 1], x.mean(dim=-1).numpy(), rtol=0, atol=1e-5,
                                       err_msg=f"layer {i + 1}")
    np.testing.assert_allclose(seqs[5][-1], jit._state[0, 0].numpy(), rtol=0, atol=1e-5)
    assert len(seqs[1]) == -(-len(y) // 512)


def test_importing_silero_keeps_torch_threads(monkeypatch):
    """silero_vad's import sets torch to one thread; the probe keeps the caller's count. The caller has 2
    here (the suite runs with one, which would hide a lost restore) and silero_vad is imported afresh."""
    import sys

    for name in [m for m in sys.modules if m == "silero_vad" or m.startswith("silero_vad.")]:
        monkeypatch.delitem(sys.modules, name)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        get_encoder("silero-vad").weights_files()
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


# ----------------------------------------------------------------------------- the probe pipeline
def test_encoder_probe_on_tones_writes_rows_controls_and_sha256(tmp_path, capsys):
    """Positive control on synthetic rising/falling tones: PESTO's output layer reads the pitch
    direction; the run names the weights' SHA-256; a second run computes nothing."""
    from vocalgrad_commands.cli import main

    try:
        get_encoder("pesto").weights_files()
    except EncoderUnavailable as exc:
        pytest.skip(str(exc))
    hub = ph.make_probe_hub(tmp_path / "hub", categories=("pitch", "volume"), sources=3)
    out = tmp_path / "out"
    argv = ["probe", "--data", str(hub), "--encoder", "pesto", "--layers", "1,7,8", "--out", str(out),
            "--epochs", "40", "--quiet", "--no-plots"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    sha = hashlib.sha256((get_encoder("pesto").weights_files()[0]).read_bytes()).hexdigest()
    assert f"weights pesto/weights/mir-1k_g7.ckpt sha256 {sha}" in printed
    import csv

    rows = list(csv.DictReader(open(out / "probe.csv")))
    enc_rows = [r for r in rows if r["stage"] == "encoder"]
    assert sorted({r["layer"] for r in enc_rows}) == ["1", "7", "8"] and {r["model"] for r in rows} == {"pesto"}
    assert {r["stage"] for r in rows} == {"mel", "encoder", "shuffled"}
    pitch = max(float(r["accuracy"]) for r in enc_rows if r["category"] == "pitch")
    assert pitch == 1.0
    assert json.loads((out / "encoder.json").read_text())["weights"][0]["sha256"] == sha
    assert sha in (out / "probe.md").read_text()
    assert main(argv) == 0
    assert "0 mel / 0 encoder clips computed" in capsys.readouterr().out


def test_shuffled_control_permutes_the_train_labels_of_the_best_layer(tmp_path, monkeypatch):
    from analysis.probe import encoder_run, trainer
    from analysis.probe.cache import FeatureCache, FeatureKey
    from analysis.probe.data import ClipSet

    seen = []

    def fake_train(xtr, ytr, xte, yte, **kw):
        seen.append((np.asarray(xtr), np.asarray(ytr), np.asarray(yte)))
        acc = 0.25 * len(seen)                                          # 0.25, 0.5, ... per permutation
        return trainer.ProbeResult(acc, acc, 1.0, len(ytr), len(yte), xtr.shape[1], 1.0)

    monkeypatch.setattr(trainer, "train_probe", fake_train)
    monkeypatch.setattr(encoder_run, "N_SHUFFLES", 3)
    cache = FeatureCache(tmp_path, "enc", {"x": 1})
    labels = {"train": np.array([1, 0] * 10, dtype=np.int8), "test": np.array([1, 0, 1, 0], dtype=np.int8)}
    sets = {}
    for split, lab in labels.items():
        cs = ClipSet(split, "pitch", [f"c{i:02d}" for i in range(len(lab))], lab, "", "")
        sets[(split, "pitch")] = cs
        for layer in (2, 3):
            w = cache.writer([FeatureKey("encoder", layer, split, "pitch")], len(lab), cs.ids_digest)
            w.write({FeatureKey("encoder", layer, split, "pitch"): np.full((len(lab), 2), layer)})
            w.close()
    rows = [{"model": "m", "category": "pitch", "stage": "encoder", "layer": layer, "accuracy": acc}
            for layer, acc in ((2, 0.9), (3, 0.9))]                   # a tie: the lower layer
    out = encoder_run.shuffled_control(rows, cache, sets, epochs=1, device="cpu")
    assert [(r["stage"], r["layer"]) for r in out] == [("shuffled", 2)]
    assert len(seen) == 3 and all(float(x[0, 0]) == 2.0 for x, _, _ in seen)
    for _, y, yte in seen:
        assert sorted(y) == sorted(labels["train"]) and not np.array_equal(y, labels["train"])
        np.testing.assert_array_equal(yte, labels["test"])             # scored on the true test labels
    assert not np.array_equal(seen[0][1], seen[1][1])                   # a new permutation each time
    assert out[0]["accuracy"] == pytest.approx(0.5) and (out[0]["accuracy_min"], out[0]["accuracy_max"]) == (0.25, 0.75)
    assert out[0]["n_train"] == 20 and out[0]["seconds"] == 3.0


# ----------------------------------------------------------------------------- a new encoder in one file
def _rms_encoder_class():
    """A user's encoder module in a few lines: frame RMS in dB (layer 1) and its frame-to-frame change (layer 2)."""
    from analysis.probe.encoders import Encoder

    class Rms(Encoder):
        name = "test-rms"
        distribution = "vocalgrad"
        install = "pip install vocalgrad"
        sample_rate = 8000
        layer_names = ("rms dB", "rms change")

        def __init__(self, weights):
            super().__init__()
            self.weights = weights

        def weights_files(self):
            return [self.weights]

        def _load(self):
            self.loaded_on = self.device

        def sequences(self, y, layers):
            frames = y[: len(y) // 80 * 80].reshape(-1, 80)
            db = 10 * np.log10((frames ** 2).mean(axis=1, keepdims=True) + 1e-8)
            return {1: db, 2: np.diff(db, axis=0, prepend=db[:1])}

    return Rms


def test_a_registered_encoder_runs_through_the_probe(tmp_path, monkeypatch):
    """An encoder added in one module (registry) gets resampling, pooling, cache, probes and provenance."""
    from analysis.probe import encoders
    from analysis.probe.encoder_run import run_encoder_probe

    weights = tmp_path / "rms.bin"
    weights.write_bytes(b"no weights")
    monkeypatch.setitem(encoders.ENCODERS, "test-rms", lambda: _rms_encoder_class()(weights))
    hub = ph.make_probe_hub(tmp_path / "hub", categories=("volume",), sources=3)
    res = run_encoder_probe(data=str(hub), out=tmp_path / "out", encoder="test-rms", stages="encoder",
                            epochs=30, plots=False, progress=False)
    rows = {(r["stage"], r["layer"]): r for r in res["rows"]}
    assert set(rows) == {("encoder", 1), ("encoder", 2), ("shuffled", 1)}
    assert rows[("encoder", 1)]["accuracy"] == 1.0 and rows[("encoder", 1)]["dim"] == 16
    assert res["provenance"]["weights"] == [{"file": "rms.bin", "sha256": hashlib.sha256(b"no weights").hexdigest(),
                                             "bytes": 10}]
    assert res["computed"]["encoder"] == 8 + 6                          # 4 train + 3 test sources x 2 clips, once each


def test_bad_encoder_arguments_are_one_line_and_write_nothing(tmp_path, capsys):
    from vocalgrad_commands.cli import main

    hub = ph.make_probe_hub(tmp_path / "hub", categories=("volume",), sources=1)
    for extra, says in ((["--encoder", "torchcrepe:small"], "unknown encoder and no such folder"),
                        (["--encoder", "silero-vad", "--layers", "0,3"], "silero-vad's layers are 1..5 (conv1,"),
                        (["--encoder", "silero-vad", "--layers", "6"], "silero-vad's layers are 1..5"),
                        (["--encoder", "silero-vad", "--layers", "x"], "silero-vad's layers are 1..5"),
                        (["--encoder", "silero-vad", "--stages", "mel,lm_text"], "choose from mel, encoder"),
                        (["--encoder", "silero-vad", "--model", "m"], "leave out --model")):
        out = tmp_path / "out"
        assert main(["probe", "--data", str(hub), "--out", str(out), *extra]) != 0
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, err
        assert not out.exists()


def test_an_entry_point_encoder_is_found_by_name(tmp_path, monkeypatch):
    from analysis.probe import encoders

    weights = tmp_path / "w.bin"
    weights.write_bytes(b"x")

    class EP:
        name, value = "test-rms-ep", "pkg.mod:Rms"

        def load(self):
            return lambda: _rms_encoder_class()(weights)

    monkeypatch.setattr(encoders, "_entry_point", lambda name: EP() if name == "test-rms-ep" else None)
    enc = encoders.get_encoder("test-rms-ep")
    assert enc.n_layers == 2 and enc.name == "test-rms"
    monkeypatch.setattr(encoders, "_entry_point", lambda name: type("E", (EP,), {"load": lambda self: dict})())
    with pytest.raises(ValueError, match="must name an analysis.probe.encoders.Encoder subclass or factory"):
        encoders.get_encoder("anything")


def test_the_package_run_probe_hands_an_encoder_to_the_encoder_run_and_refuses_model_settings(tmp_path):
    import analysis.probe as probe

    with pytest.raises(ValueError, match="exclusive"):
        probe.run_probe(encoder="pesto", model="org/m", data=str(tmp_path), out=tmp_path / "o")
    with pytest.raises(TypeError, match="does not take processor"):
        probe.run_probe(encoder="pesto", processor="p", data=str(tmp_path), out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
