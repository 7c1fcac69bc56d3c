"""Tiny random checkpoints of the newest families (Voxtral, Gemma 3n, Gemma 4, Qwen3-Omni, Music
Flamingo), offline on CPU; registered in ``tests/_family_helpers.BUILDERS``."""

from __future__ import annotations

from pathlib import Path

import _harness_helpers as hh
from _family_common import _ids, _save, _template, _tokenizer_with_roles


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

    tok = _tokenizer_with_roles(["<|turn>"], GEMMA4_ROLES, eos="<turn|>", pad="<pad>", bos="<bos>", add_bos=True)
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
