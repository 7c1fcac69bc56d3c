"""Tiny random checkpoints of every model family (offline, CPU), saved with their processors.

``BUILDERS[family](folder) -> folder``. All sub-configs use ``initializer_range`` 0.2 so that
the audio visibly moves the logits of a random model.
"""

from __future__ import annotations

from pathlib import Path

import _harness_helpers as hh

BUILDERS = {
    "qwen2_audio": hh.build_tiny_qwen2_audio,
    "audioflamingo3": hh.build_tiny_audio_flamingo3,
}


def _save(model, tok, folder: Path) -> Path:
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(folder)
    return Path(folder)


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


def _template(user_open: str, user_close: str, audio: str, assistant: str) -> str:
    """Chat template with ``{role}`` substituted in the turn header."""
    return ("{% for m in messages %}" + user_open + "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
            "{% for c in m['content'] %}{% if c['type'] == 'audio' %}" + audio +
            "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}" + user_close +
            "{% endfor %}{% if add_generation_prompt %}" + assistant + "{% endif %}")


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


# ----------------------------------------------------------------------------- newest families
def _tokenizer_with_roles(specials: list[str], roles: dict[str, str], *, eos: str, pad: str, bos: str | None = None,
                          add_bos: bool = False):
    """Byte-level tokenizer whose named special tokens (``roles``: attribute -> token, e.g.
    ``audio_token``) are attributes of the tokenizer, with ``<attr>_id`` (what the Gemma and
    Qwen3-Omni processors read). ``add_bos``: it puts ``bos`` before every text it encodes with
    special tokens on, as the real Gemma tokenizers do (``add_bos_token``)."""
    from tokenizers.pre_tokenizers import ByteLevel
    from tokenizers.processors import TemplateProcessing
    from transformers import Qwen2Tokenizer

    vocab = {ch: i for i, ch in enumerate(sorted(ByteLevel.alphabet()))}
    tok = Qwen2Tokenizer(vocab=vocab, merges=[], unk_token=None, bos_token=bos, eos_token=eos, pad_token=pad,
                         extra_special_tokens=dict(roles))
    tok.add_special_tokens({"additional_special_tokens": specials + list(roles.values())})
    if add_bos:
        bos_id = tok.convert_tokens_to_ids(bos)
        tok._tokenizer.post_processor = TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                                           special_tokens=[(bos, bos_id)])
    return tok


def _ids(tok, *tokens: str) -> list[int]:
    return [tok.convert_tokens_to_ids(t) for t in tokens]


# Voxtral ---------------------------------------------------------------------
def _tekken_specials(n: int) -> list[str]:
    """mistral-common's special tokens, ``[AUDIO]`` at rank 24 (VoxtralProcessor takes the audio
    token id to be 24, as in the real tekken.json), fillers up to ``n``."""
    from mistral_common.tokens.tokenizers.base import SpecialTokens

    audio = ["[AUDIO]", "[BEGIN_AUDIO]"]
    rest = [t.value for t in SpecialTokens if t.value not in audio]
    out = rest[:20] + [f"<SPECIAL_{i}>" for i in range(20, 24)] + audio + rest[20:]
    return out + [f"<SPECIAL_{i}>" for i in range(len(out), n)]


def write_tekken(folder: Path, n_special: int = 64, chunk_s: float = 2.0) -> Path:
    """A byte-level ``tekken.json`` (version v7, 256 byte tokens, audio at 16 kHz, 12.5 tokens/s,
    16 mel bins) that mistral-common loads as Voxtral's tokenizer; audio in ``chunk_s`` chunks
    (the real 30 s; 2 s here, with an encoder of 100 positions instead of 1500, to keep the tests
    fast)."""
    import base64
    import json

    specials = _tekken_specials(n_special)
    pattern = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    data = {
        "config": {"pattern": pattern, "num_vocab_tokens": 256, "default_vocab_size": 256 + n_special,
                   "default_num_special_tokens": n_special, "version": "v7"},
        "vocab": [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None}
                  for i in range(256)],
        "special_tokens": [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(specials)],
        "audio": {"sampling_rate": 16000, "frame_rate": 12.5, "chunk_length_s": chunk_s,
                  "audio_encoding_config": {"num_mel_bins": 16, "hop_length": 160, "window_size": 400}},
        "version": 1, "type": "Tekken",
    }
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / "tekken.json").write_text(json.dumps(data))
    return Path(folder) / "tekken.json"


def build_tiny_voxtral(folder: Path) -> Path:
    """Random tiny Voxtral with the real tokenizer package: mistral-common's Tekkenizer over a
    byte-level ``tekken.json`` (:func:`write_tekken`) behind transformers' MistralCommonBackend;
    the processor saves and reloads with AutoProcessor."""
    import torch
    from transformers import (MistralCommonBackend, VoxtralConfig, VoxtralForConditionalGeneration,
                              VoxtralProcessor, WhisperFeatureExtractor)

    try:
        import mistral_common  # noqa: F401
    except ImportError as exc:
        raise ImportError("the tiny Voxtral needs mistral-common: bash scripts/test.sh installs it "
                          "(pip install --no-deps mistral-common==1.13.1)") from exc
    folder = Path(folder)
    write_tekken(folder)
    tok = MistralCommonBackend.from_pretrained(str(folder))
    VoxtralProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=16), tokenizer=tok).save_pretrained(folder)
    cfg = VoxtralConfig(
        audio_config=dict(num_mel_bins=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=128, max_source_positions=100, initializer_range=0.2),
        text_config=dict(model_type="llama", vocab_size=len(tok), hidden_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, intermediate_size=64,
                         initializer_range=0.2, max_position_embeddings=4096),
        audio_token_id=tok.convert_tokens_to_ids("[AUDIO]"), initializer_range=0.2)
    torch.manual_seed(0)
    model = VoxtralForConditionalGeneration(cfg).eval()
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(folder)
    return folder


# Gemma 3n --------------------------------------------------------------------
GEMMA3N_ROLES = {"audio_token": "<audio_soft_token>", "boa_token": "<start_of_audio>", "eoa_token": "<end_of_audio>",
                 "image_token": "<image_soft_token>", "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>"}
#: Gemma-style turns (hand-written, unverified: the real template ships only in the checkpoint).
GEMMA3N_TEMPLATE = _template("<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n",
                             "<end_of_turn>\n", "<audio_soft_token>", "<start_of_turn>model\n")
#: Soft tokens per clip (the real 188 cover 30 s; 32 cover the tests' clips of up to 5 s).
GEMMA3N_AUDIO_TOKENS = 32


def _gemma3n_vision_without_timm() -> None:
    """Gemma 3n builds its vision tower through timm (which needs torchvision; the registry's builds
    are CUDA-only here). Audio never reaches it, so without timm an empty stand-in model is
    registered for the vision config: the audio tower, projector and language model are the real
    ones."""
    try:
        import timm  # noqa: F401

        return
    except ImportError:
        pass
    from transformers import AutoModel, PreTrainedModel
    from transformers.models.gemma3n.configuration_gemma3n import Gemma3nVisionConfig

    class VisionStandIn(PreTrainedModel):
        config_class = Gemma3nVisionConfig
        base_model_prefix = "vision_stand_in"

        def __init__(self, config):
            super().__init__(config)
            self.post_init()

        def _init_weights(self, module):
            pass

        def forward(self, *args, **kwargs):
            raise RuntimeError("the tiny Gemma 3n has no vision tower (timm is not installed)")

    AutoModel.register(Gemma3nVisionConfig, VisionStandIn, exist_ok=True)


def gemma3n_processor(folder: Path):
    """Audio-only Gemma 3n processor (its image processor is left out; the real one also needs
    timm / torchvision), 12 soft tokens per clip."""
    from transformers import Gemma3nAudioFeatureExtractor, Gemma3nProcessor
    from transformers.processing_utils import ProcessorMixin

    _gemma3n_vision_without_timm()

    class Gemma3nAudioProcessor(Gemma3nProcessor):
        def __init__(self, feature_extractor=None, tokenizer=None, chat_template=None, audio_seq_length=188):
            self.audio_seq_length = audio_seq_length
            self.audio_token_id, self.audio_token = tokenizer.audio_token_id, tokenizer.audio_token
            self.boa_token = tokenizer.boa_token
            self.full_audio_sequence = (f"\n\n{tokenizer.boa_token}{tokenizer.audio_token * audio_seq_length}"
                                        f"{tokenizer.eoa_token}\n\n")
            self.image_seq_length, self.image_token_id = 0, tokenizer.image_token_id
            self.image_token = tokenizer.image_token
            ProcessorMixin.__init__(self, feature_extractor, tokenizer, chat_template=chat_template)

    tok = _tokenizer_with_roles(["<start_of_turn>"], GEMMA3N_ROLES, eos="<end_of_turn>", pad="<pad>", bos="<bos>",
                                add_bos=True)
    return Gemma3nAudioProcessor(feature_extractor=Gemma3nAudioFeatureExtractor(feature_size=16), tokenizer=tok,
                                 chat_template="{{ bos_token }}" + GEMMA3N_TEMPLATE,
                                 audio_seq_length=GEMMA3N_AUDIO_TOKENS)


def build_tiny_gemma3n(folder: Path) -> Path:
    """Random tiny Gemma 3n (the processor: :func:`gemma3n_processor`)."""
    import torch
    from transformers import Gemma3nConfig, Gemma3nForConditionalGeneration

    tok = gemma3n_processor(folder).tokenizer
    n = len(tok)
    boa, eoa, boi, eoi = _ids(tok, "<start_of_audio>", "<end_of_audio>", "<start_of_image>", "<end_of_image>")
    cfg = Gemma3nConfig(
        text_config=dict(vocab_size=n + 8, vocab_size_per_layer_input=n, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                         hidden_size_per_layer_input=8, laurel_rank=4, altup_num_inputs=2, num_kv_shared_layers=0,
                         layer_types=["sliding_attention", "full_attention"], activation_sparsity_pattern=[0.0, 0.0],
                         initializer_range=0.2, max_position_embeddings=4096, pad_token_id=tok.pad_token_id,
                         eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id),
        audio_config=dict(vocab_size=4, vocab_offset=n + 4, input_feat_size=16, hidden_size=32,
                          conf_num_attention_heads=2, conf_num_hidden_layers=1, sscp_conv_channel_size=[8, 4],
                          initializer_range=0.2),
        vision_config=dict(vocab_size=4, vocab_offset=n, hidden_size=32, initializer_range=0.2),
        audio_token_id=tok.audio_token_id, boa_token_id=boa, eoa_token_id=eoa, image_token_id=tok.image_token_id,
        boi_token_id=boi, eoi_token_id=eoi, audio_soft_tokens_per_image=GEMMA3N_AUDIO_TOKENS, initializer_range=0.2)
    torch.manual_seed(0)
    return _save(Gemma3nForConditionalGeneration(cfg).eval(), tok, folder)


# Gemma 4 ---------------------------------------------------------------------
GEMMA4_ROLES = {"audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>",
                "image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>"}
#: Turn markers of the Gemma 4 tokenizer as the processor's token names suggest; hand-written,
#: unverified (the real template ships only in the checkpoint).
GEMMA4_TEMPLATE = _template("<|turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n", "<turn|>\n",
                            "<|audio|>", "<|turn>model\n")


def gemma4_processor(folder: Path):
    """Audio-only Gemma 4 processor (its image and video processors are left out: the video one
    needs torchvision)."""
    from transformers import Gemma4AudioFeatureExtractor, Gemma4Processor
    from transformers.processing_utils import ProcessorMixin

    class Gemma4AudioProcessor(Gemma4Processor):
        def __init__(self, feature_extractor=None, tokenizer=None, chat_template=None, audio_seq_length=750,
                     audio_ms_per_token=40):
            self.audio_seq_length, self.audio_ms_per_token = audio_seq_length, audio_ms_per_token
            for attr in ("audio_token", "boa_token", "eoa_token", "audio_token_id", "image_token", "boi_token",
                         "eoi_token", "image_token_id"):
                setattr(self, attr, getattr(tokenizer, attr))
            self.image_seq_length = 0
            ProcessorMixin.__init__(self, feature_extractor, tokenizer, chat_template=chat_template)

    tok = _tokenizer_with_roles(["<|turn>", "<|channel>", "<channel|>"], GEMMA4_ROLES, eos="<turn|>", pad="<pad>",
                                bos="<bos>", add_bos=True)   # the thought-channel markers are special, as in Gemma 4
    return Gemma4AudioProcessor(feature_extractor=Gemma4AudioFeatureExtractor(feature_size=16), tokenizer=tok,
                                chat_template="{{ bos_token }}" + GEMMA4_TEMPLATE)


def build_tiny_gemma4(folder: Path) -> Path:
    """Random tiny Gemma 4 with an audio tower and no vision tower (the processor:
    :func:`gemma4_processor`); 16 mel bins, so the first subsampling conv has 16 channels (the
    projection's input width is ``channels[0] // 4 * channels[1]``)."""
    import torch
    from transformers import Gemma4Config, Gemma4ForConditionalGeneration

    tok = gemma4_processor(folder).tokenizer
    boa, eoa, boi, eoi = _ids(tok, "<|audio>", "<audio|>", "<|image>", "<image|>")
    cfg = Gemma4Config(
        text_config=dict(vocab_size=len(tok), vocab_size_per_layer_input=len(tok), hidden_size=32,
                         intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=16, global_head_dim=16, hidden_size_per_layer_input=8, num_kv_shared_layers=0,
                         layer_types=["sliding_attention", "full_attention"], sliding_window=64,
                         initializer_range=0.2, max_position_embeddings=4096, final_logit_softcapping=30.0,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id),
        audio_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, subsampling_conv_channels=[16, 4],
                          output_proj_dims=32, initializer_range=0.2),
        vision_config=None, audio_token_id=tok.audio_token_id, boa_token_id=boa, eoa_token_index=eoa,
        image_token_id=tok.image_token_id, boi_token_id=boi, eoi_token_id=eoi, video_token_id=tok.image_token_id,
        initializer_range=0.2)
    torch.manual_seed(0)
    return _save(Gemma4ForConditionalGeneration(cfg).eval(), tok, folder)


# Qwen3-Omni ------------------------------------------------------------------
QWEN3_OMNI_ROLES = {"audio_token": "<|audio_pad|>", "audio_bos_token": "<|audio_start|>",
                    "audio_eos_token": "<|audio_end|>", "image_token": "<|image_pad|>", "video_token": "<|video_pad|>",
                    "vision_bos_token": "<|vision_start|>", "vision_eos_token": "<|vision_end|>"}
#: Qwen chat turns with the clip as <|audio_start|><|audio_pad|><|audio_end|> (hand-written, unverified).
QWEN3_OMNI_TEMPLATE = hh.IN_ORDER_TEMPLATE.replace("<sound>", "<|audio_start|><|audio_pad|><|audio_end|>")


def qwen3_omni_processor(folder: Path):
    """Audio-only Qwen3-Omni processor (its image/video processors need torchvision)."""
    from transformers import Qwen3OmniMoeProcessor, WhisperFeatureExtractor
    from transformers.processing_utils import ProcessorMixin

    class Qwen3OmniAudioProcessor(Qwen3OmniMoeProcessor):
        def __init__(self, feature_extractor=None, tokenizer=None, chat_template=None):
            ProcessorMixin.__init__(self, feature_extractor, tokenizer, chat_template=chat_template)
            for attr in ("image_token", "audio_token", "video_token", "image_token_id", "audio_token_id",
                         "video_token_id", "vision_bos_token", "vision_eos_token", "audio_bos_token",
                         "audio_eos_token"):
                setattr(self, attr, getattr(tokenizer, attr))

    tok = _tokenizer_with_roles(["<|im_start|>"], QWEN3_OMNI_ROLES, eos="<|im_end|>", pad="<|endoftext|>")
    return Qwen3OmniAudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=16, chunk_length=2),
                                   tokenizer=tok, chat_template=QWEN3_OMNI_TEMPLATE)


def build_tiny_qwen3_omni(folder: Path) -> Path:
    """Random tiny Qwen3-Omni thinker (MoE text model, 4 experts; the processor:
    :func:`qwen3_omni_processor`)."""
    import torch
    from transformers import Qwen3OmniMoeThinkerConfig, Qwen3OmniMoeThinkerForConditionalGeneration

    proc = qwen3_omni_processor(folder)
    tok, fe = proc.tokenizer, proc.feature_extractor
    audio, image, video, a_start, v_start = _ids(tok, "<|audio_pad|>", "<|image_pad|>", "<|video_pad|>",
                                                 "<|audio_start|>", "<|vision_start|>")
    cfg = Qwen3OmniMoeThinkerConfig(
        audio_config=dict(num_mel_bins=16, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32,
                          output_dim=32, downsample_hidden_size=8, initializer_range=0.2,
                          max_source_positions=fe.nb_max_frames // 2),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           deepstack_visual_indexes=[0], initializer_range=0.2),
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, moe_intermediate_size=16,
                         num_experts=4, num_experts_per_tok=2, initializer_range=0.2, max_position_embeddings=4096,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                          "mrope_interleaved": True}),
        audio_token_id=audio, image_token_id=image, video_token_id=video, audio_start_token_id=a_start,
        vision_start_token_id=v_start, initializer_range=0.2)
    torch.manual_seed(0)
    return _save(Qwen3OmniMoeThinkerForConditionalGeneration(cfg).eval(), tok, folder)


# Music Flamingo --------------------------------------------------------------
#: The default system turn of transformers' convert_musicflamingo_to_hf.py (write_processor()).
MUSICFLAMINGO_SYSTEM = (
    "You are Music Flamingo, a multimodal assistant for language and music. On each turn you receive an audio clip "
    "which contains music and optional text, you will receive at least one or both; use your world knowledge and "
    "reasoning to help the user with any task. Interpret the entirety of the content any input music--regardlenss of "
    "whether the user calls it audio, music, or sound.")
#: Music Flamingo's processor template, behaviour for behaviour: Audio Flamingo 3's (one <sound> per
#: turn, before its text) with the system turn above.
MUSICFLAMINGO_TEMPLATE = hh.AF3_TEMPLATE.replace("You are a helpful assistant.", MUSICFLAMINGO_SYSTEM)


def build_tiny_musicflamingo(folder: Path) -> Path:
    """Random tiny Music Flamingo saved with its processor (reloads with AutoProcessor): AF3's
    encoder, <|sound_bos|>/<|sound_eos|> around each clip's <sound> run, the conversion's
    template behaviour (:data:`MUSICFLAMINGO_TEMPLATE`), 2-s windows, clips cut at 4 s."""
    import torch
    from transformers import (MusicFlamingoConfig, MusicFlamingoForConditionalGeneration, MusicFlamingoProcessor,
                              WhisperFeatureExtractor)

    tok = hh._byte_tokenizer(["<sound>", "<|sound_bos|>", "<|sound_eos|>", "<|im_start|>", "<|im_end|>",
                              "<|endoftext|>"], eos="<|im_end|>", pad="<|endoftext|>")
    fe = WhisperFeatureExtractor(feature_size=16, chunk_length=2, return_attention_mask=True)
    proc = MusicFlamingoProcessor(feature_extractor=fe, tokenizer=tok, chat_template=MUSICFLAMINGO_TEMPLATE,
                                  max_audio_len=4)
    sound, bos, eos = _ids(tok, "<sound>", "<|sound_bos|>", "<|sound_eos|>")
    cfg = MusicFlamingoConfig(
        audio_config=dict(model_type="audioflamingo3_encoder", num_mel_bins=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=64, max_source_positions=fe.nb_max_frames // 2, initializer_range=0.2),
        text_config=hh._text_config(len(tok)), audio_token_id=sound, audio_bos_token_id=bos, audio_eos_token_id=eos)
    torch.manual_seed(0)
    model = _save(MusicFlamingoForConditionalGeneration(cfg).eval(), tok, folder)
    proc.save_pretrained(folder)
    return model


BUILDERS.update(voxtral=build_tiny_voxtral, gemma3n=build_tiny_gemma3n, gemma4=build_tiny_gemma4,
                qwen3_omni=build_tiny_qwen3_omni, musicflamingo=build_tiny_musicflamingo)
PROCESSORS.update(gemma3n=gemma3n_processor, gemma4=gemma4_processor, qwen3_omni=qwen3_omni_processor)
