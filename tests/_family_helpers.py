"""Tiny random checkpoints of every model family (offline, CPU), saved with their processors.

``BUILDERS[family](folder) -> folder``. All sub-configs use ``initializer_range`` 0.2 so that
the audio visibly moves the logits of a random model.
"""

from __future__ import annotations

from pathlib import Path

import _harness_helpers as hh
from _family_common import _ids, _save, _template, _tokenizer_with_roles  # noqa: F401
from _family_newest import (GEMMA3N_TEMPLATE, GEMMA4_TEMPLATE, MUSICFLAMINGO_SYSTEM,  # noqa: F401
                            MUSICFLAMINGO_TEMPLATE, QWEN3_OMNI_TEMPLATE, build_tiny_gemma3n, build_tiny_gemma4,
                            build_tiny_musicflamingo, build_tiny_qwen3_omni, build_tiny_voxtral, gemma3n_processor,
                            gemma4_processor, qwen3_omni_processor, write_tekken)

BUILDERS = {
    "qwen2_audio": hh.build_tiny_qwen2_audio,
    "audioflamingo3": hh.build_tiny_audio_flamingo3,
}


# ----------------------------------------------------------------------------- Qwen2.5-Omni
OMNI_SPECIALS = ["<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>", "<|IMAGE|>", "<|VIDEO|>", "<|vision_bos|>",
                 "<|vision_eos|>", "<|im_start|>", "<|im_end|>", "<|endoftext|>"]
OMNI_TEMPLATE = hh.IN_ORDER_TEMPLATE.replace("<sound>", "<|audio_bos|><|AUDIO|><|audio_eos|>")


def omni_processor(folder: Path):
    """Audio-only Qwen2.5-Omni processor (its video processor needs torchvision, absent here)."""
    from transformers import Qwen2_5OmniProcessor, WhisperFeatureExtractor
    from transformers.processing_utils import ProcessorMixin

    class OmniAudioProcessor(Qwen2_5OmniProcessor):
        def __init__(self, feature_extractor=None, tokenizer=None, chat_template=None):
            ProcessorMixin.__init__(self, feature_extractor, tokenizer, chat_template=chat_template)
            names = dict(image_token="<|IMAGE|>", audio_token="<|AUDIO|>", video_token="<|VIDEO|>",
                         vision_bos_token="<|vision_bos|>", vision_eos_token="<|vision_eos|>",
                         audio_bos_token="<|audio_bos|>", audio_eos_token="<|audio_eos|>")
            for attr, text in names.items():
                setattr(self, attr, text)
            for attr in ("image_token", "audio_token", "video_token"):
                setattr(self, attr + "_id", tokenizer.convert_tokens_to_ids(names[attr]))

    tok = hh._byte_tokenizer(OMNI_SPECIALS, eos="<|im_end|>", pad="<|endoftext|>")
    fe = WhisperFeatureExtractor(feature_size=16, chunk_length=2)
    return OmniAudioProcessor(feature_extractor=fe, tokenizer=tok, chat_template=OMNI_TEMPLATE)


def build_tiny_qwen2_5_omni(folder: Path) -> Path:
    """Random tiny Qwen2.5-Omni thinker (the processor: :func:`omni_processor`)."""
    import torch
    from transformers import Qwen2_5OmniThinkerConfig, Qwen2_5OmniThinkerForConditionalGeneration

    proc = omni_processor(folder)
    tok, fe = proc.tokenizer, proc.feature_extractor
    ids = {s: tok.convert_tokens_to_ids(s) for s in OMNI_SPECIALS}
    cfg = Qwen2_5OmniThinkerConfig(
        audio_config=dict(num_mel_bins=16, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=64, max_source_positions=fe.nb_max_frames // 2, n_window=50,
                          output_dim=32, initializer_range=0.2),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           fullatt_block_indexes=[0], initializer_range=0.2),
        text_config=dict(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, intermediate_size=64, initializer_range=0.2,
                         max_position_embeddings=512, rope_scaling={"type": "default", "mrope_section": [2, 3, 3]}),
        audio_token_index=ids["<|AUDIO|>"], image_token_index=ids["<|IMAGE|>"], video_token_index=ids["<|VIDEO|>"],
        audio_start_token_id=ids["<|audio_bos|>"], audio_end_token_id=ids["<|audio_eos|>"],
        vision_start_token_id=ids["<|vision_bos|>"], vision_end_token_id=ids["<|vision_eos|>"], initializer_range=0.2)
    torch.manual_seed(0)
    return _save(Qwen2_5OmniThinkerForConditionalGeneration(cfg).eval(), tok, folder)


BUILDERS["qwen2_5_omni"] = build_tiny_qwen2_5_omni
#: Families whose processor cannot be saved/reloaded here: family -> processor factory (folder).
PROCESSORS = {"qwen2_5_omni": omni_processor}


# ----------------------------------------------------------------------------- Phi-4-multimodal
PHI_SPECIALS = ["<|audio|>", "<|image|>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>", "<|endoftext|>"]


def phi4_processor(folder: Path):
    """Audio-only Phi-4-multimodal processor (its image processor needs torchvision, absent here)."""
    from transformers import Phi4MultimodalFeatureExtractor, Phi4MultimodalProcessor
    from transformers.processing_utils import ProcessorMixin

    class Phi4AudioProcessor(Phi4MultimodalProcessor):
        def __init__(self, audio_processor=None, tokenizer=None, chat_template=None):
            self.image_token, self.audio_token = "<|image|>", "<|audio|>"
            self.image_token_id = tokenizer.convert_tokens_to_ids("<|image|>")
            self.audio_token_id = tokenizer.convert_tokens_to_ids("<|audio|>")
            ProcessorMixin.__init__(self, audio_processor, tokenizer, chat_template=chat_template)

    tok = hh._byte_tokenizer(PHI_SPECIALS, eos="<|end|>", pad="<|endoftext|>")
    template = _template("<|{{ m['role'] }}|>", "<|end|>", "<|audio|>", "<|assistant|>")
    return Phi4AudioProcessor(audio_processor=Phi4MultimodalFeatureExtractor(feature_size=16), tokenizer=tok,
                              chat_template=template)


def build_tiny_phi4_multimodal(folder: Path) -> Path:
    """Random tiny Phi-4-multimodal (the processor: :func:`phi4_processor`)."""
    import torch
    from transformers import Phi4MultimodalConfig, Phi4MultimodalForCausalLM

    tok = phi4_processor(folder).tokenizer
    ids = {s: tok.convert_tokens_to_ids(s) for s in PHI_SPECIALS}
    cfg = Phi4MultimodalConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=512, original_max_position_embeddings=512,
        initializer_range=0.2, bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|end|>"],
        pad_token_id=ids["<|endoftext|>"],
        audio_config=dict(hidden_size=32, intermediate_size=64, num_blocks=1, num_attention_heads=2, input_size=16,
                          ext_pw_out_channel=32, depthwise_separable_out_channel=32, nemo_conv_channels=32,
                          initializer_range=0.2, audio_token_id=ids["<|audio|>"]),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_token_id=ids["<|image|>"], initializer_range=0.2))
    torch.manual_seed(0)
    return _save(Phi4MultimodalForCausalLM(cfg).eval(), tok, folder)


# ----------------------------------------------------------------------------- Granite Speech
GRANITE_SPECIALS = ["<|audio|>", "<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>", "<|pad|>"]


def _granite_mel_without_torchaudio() -> None:
    """Granite's feature extractor computes its mel spectrogram with torchaudio, absent here (the
    registry's builds are CUDA-only). Give that module a torch-only MelSpectrogram (same
    parameters: power-2 STFT magnitudes through an HTK mel filterbank) so the real extractor,
    processor and model run."""
    import types

    import torch
    import transformers.models.granite_speech.feature_extraction_granite_speech as gfe
    from transformers.audio_utils import mel_filter_bank

    if gfe.is_torchaudio_available() or hasattr(gfe, "torchaudio"):
        return

    class MelSpectrogram(torch.nn.Module):
        def __init__(self, sample_rate, n_fft, win_length, hop_length, n_mels):
            super().__init__()
            self.n_fft, self.win, self.hop = n_fft, win_length, hop_length
            self.register_buffer("window", torch.hann_window(win_length))
            fb = mel_filter_bank(num_frequency_bins=n_fft // 2 + 1, num_mel_filters=n_mels, min_frequency=0.0,
                                 max_frequency=sample_rate / 2, sampling_rate=sample_rate, norm=None,
                                 mel_scale="htk")
            self.register_buffer("fb", torch.from_numpy(fb).float())

        def forward(self, x):
            spec = torch.stft(x, self.n_fft, self.hop, self.win, self.window, center=True,
                              return_complex=True).abs() ** 2
            return (spec.transpose(-1, -2) @ self.fb).transpose(-1, -2)

    gfe.torchaudio = types.SimpleNamespace(transforms=types.SimpleNamespace(MelSpectrogram=MelSpectrogram))
    gfe.requires_backends = lambda *a, **k: None


def granite_processor(folder: Path):
    """Granite Speech processor (16 mel bins), built in-process."""
    _granite_mel_without_torchaudio()
    from transformers import GraniteSpeechFeatureExtractor, GraniteSpeechProcessor

    tok = hh._byte_tokenizer(GRANITE_SPECIALS, eos="<|end_of_text|>", pad="<|pad|>")
    template = _template("<|start_of_role|>{{ m['role'] }}<|end_of_role|>", "<|end_of_text|>\n", "<|audio|>",
                         "<|start_of_role|>assistant<|end_of_role|>")
    return GraniteSpeechProcessor(audio_processor=GraniteSpeechFeatureExtractor(n_mels=16), tokenizer=tok,
                                  chat_template=template)


def build_tiny_granite_speech(folder: Path) -> Path:
    """Random tiny Granite Speech (the processor: :func:`granite_processor`)."""
    import torch
    from transformers import GraniteSpeechConfig, GraniteSpeechForConditionalGeneration

    tok = granite_processor(folder).tokenizer
    ids = {s: tok.convert_tokens_to_ids(s) for s in GRANITE_SPECIALS}
    cfg = GraniteSpeechConfig(
        text_config=dict(model_type="granite", vocab_size=len(tok), hidden_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, intermediate_size=64, initializer_range=0.2,
                         max_position_embeddings=512, pad_token_id=ids["<|pad|>"],
                         eos_token_id=ids["<|end_of_text|>"], bos_token_id=ids["<|end_of_text|>"]),
        encoder_config=dict(input_dim=32, num_layers=1, hidden_dim=32, feedforward_mult=2, num_heads=2, dim_head=16,
                            output_dim=8, context_size=50, max_pos_emb=64),
        projector_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                              encoder_hidden_size=32, initializer_range=0.2),
        audio_token_index=ids["<|audio|>"], has_lora_adapter=False, initializer_range=0.2)
    torch.manual_seed(0)
    return _save(GraniteSpeechForConditionalGeneration(cfg).eval(), tok, folder)


BUILDERS.update(phi4_multimodal=build_tiny_phi4_multimodal, granite_speech=build_tiny_granite_speech)
PROCESSORS.update(phi4_multimodal=phi4_processor, granite_speech=granite_processor)


# ----------------------------------------------------------------------------- remote code
REMOTE_MODELING = '''"""A remote-code audio LM for the tests: a Qwen2-Audio under its own model type."""
from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration


class TinyRemoteAudioConfig(Qwen2AudioConfig):
    model_type = "tiny_remote_audio"


class TinyRemoteAudioLM(Qwen2AudioForConditionalGeneration):
    config_class = TinyRemoteAudioConfig
    remote_marker = "loaded from modeling_tiny_remote.py"
'''


def build_tiny_remote_code(folder: Path) -> Path:
    """A checkpoint whose ``config.json`` has an ``auto_map`` into ``modeling_tiny_remote.py``
    in the same folder (the class is not in transformers): loads only with trust_remote_code."""
    import json

    folder = hh.build_tiny_qwen2_audio(Path(folder))
    (folder / "modeling_tiny_remote.py").write_text(REMOTE_MODELING)
    cfg_path = folder / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.update(model_type="tiny_remote_audio", architectures=["TinyRemoteAudioLM"],
               auto_map={"AutoConfig": "modeling_tiny_remote.TinyRemoteAudioConfig",
                         "AutoModelForCausalLM": "modeling_tiny_remote.TinyRemoteAudioLM"})
    cfg_path.write_text(json.dumps(cfg, indent=2))
    return folder


BUILDERS.update(voxtral=build_tiny_voxtral, gemma3n=build_tiny_gemma3n, gemma4=build_tiny_gemma4,
                qwen3_omni=build_tiny_qwen3_omni, musicflamingo=build_tiny_musicflamingo)
PROCESSORS.update(gemma3n=gemma3n_processor, gemma4=gemma4_processor, qwen3_omni=qwen3_omni_processor)
