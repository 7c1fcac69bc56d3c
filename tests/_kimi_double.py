"""TEST DOUBLE of ``kimia_infer`` (MoonshotAI/Kimi-Audio's inference package) for
tests/test_family_kimi_audio.py: :func:`write_fake` writes the package and a checkpoint folder (see that
test's docstring for what the double mimics and what passing means)."""

from __future__ import annotations

import json
from pathlib import Path

_KIMIA = '''"""TEST DOUBLE of kimia_infer.api.kimia (written by tests/test_family_kimi_audio.py), not the package."""
import numpy as np
import soundfile as sf
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import PretrainedConfig
from transformers.modeling_outputs import CausalLMOutputWithPast

BLANK, EOS, USER, ASSISTANT, MEDIA_BEGIN, MEDIA_END, MSG_END, CT, CTD = range(300, 309)
OFFSET, LEVELS, FEAT, FRAME, RATE = 320, 16, 4, 1280, 16000


class ExtraTokens:
    kimia_text_blank, kimia_text_eos = BLANK, EOS
    kimia_user_msg_start, kimia_assistant_msg_start = USER, ASSISTANT
    media_begin, media_end, msg_end = MEDIA_BEGIN, MEDIA_END, MSG_END
    kimia_speech_ct_id, kimia_speech_ctd_id = CT, CTD


class ByteTokenizer:
    def encode(self, text, bos=False, eos=False):
        return list(text.encode("utf-8"))

    def decode(self, ids):
        return bytes(i for i in ids if i < 256).decode("utf-8", "replace")


class Content:
    def __init__(self):
        self.audio, self.text, self.cont, self.continuous_feature = [], [], [], []

    def add(self, audio, text, cont=False):
        self.audio.append(audio)
        self.text.append(text)
        self.cont.append(cont)

    def to_tensor(self):
        return (torch.tensor([self.audio]), torch.tensor([self.text]), torch.tensor([self.cont]))


class PromptManager:
    def __init__(self):
        self.extra_tokens = ExtraTokens()
        self.text_tokenizer = ByteTokenizer()

    def _clip(self, path):
        y, sr = sf.read(path, dtype="float32")
        assert sr == RATE, sr
        n = len(y) // FRAME
        frames = y[: n * FRAME].reshape(n, FRAME)
        level = np.log10(np.sqrt((frames ** 2).mean(axis=1)) + 1e-4)          # -4 .. 0
        tokens = [OFFSET + int(v) for v in np.clip((level + 4) / 4 * LEVELS, 0, LEVELS - 1)]
        pos = np.linspace(0, 1, n)
        feat = np.stack([level, level * pos, pos, np.ones(n)], axis=1).astype(np.float32)
        return tokens, torch.from_numpy(feat)[None]

    def get_prompt(self, messages, output_type="text"):
        c = Content()
        for i, m in enumerate(messages):
            assert m["role"] in ("user", "assistant")
            if i == 0 or messages[i - 1]["role"] != m["role"]:
                c.add(USER if m["role"] == "user" else ASSISTANT, BLANK)
            if m["message_type"] == "text":
                for t in self.text_tokenizer.encode(m["content"]):
                    c.add(BLANK, t)
            else:
                tokens, feat = self._clip(m["content"])
                c.add(MEDIA_BEGIN, BLANK)
                for t in tokens:
                    c.add(t, BLANK, True)
                c.add(MEDIA_END, BLANK)
                c.continuous_feature.append(feat)
            if i == len(messages) - 1 or messages[i + 1]["role"] != m["role"]:
                if m["message_type"] == "audio":
                    c.add(CT if output_type == "text" else CTD, BLANK)
                c.add(MSG_END, BLANK)
        c.add(ASSISTANT, BLANK)  # always: the assistant start (kimia_infer at commit 2607d51)
        return c


class Block(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(h, h) for _ in range(4))
        self.up_proj, self.down_proj = nn.Linear(h, 2 * h), nn.Linear(2 * h, h)

    def forward(self, x):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        n = x.shape[1]
        s = q @ k.transpose(1, 2) / x.shape[-1] ** 0.5
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        x = x + self.o_proj(s.softmax(-1) @ v)
        return x + self.down_proj(F.gelu(self.up_proj(x)))


class Decoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg.hidden_size
        self.embed_tokens = nn.Embedding(cfg.vocab_size, h)
        self.vq_adaptor = nn.Linear(FEAT, h)
        self.layers = nn.ModuleList(Block(h) for _ in range(cfg.num_hidden_layers))
        self.norm = nn.LayerNorm(h)


class FakeKimiaForCausalLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.model = Decoder(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.mimo_output = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def get_output_embeddings(self):
        return self.lm_head

    def get_decoder(self):
        return self.model

    def forward(self, input_ids=None, text_input_ids=None, whisper_input_feature=None, is_continuous_mask=None,
                attention_mask=None, position_ids=None, past_key_values=None, return_dict=None, use_cache=None,
                output_hidden_states=None, **kw):
        assert input_ids.shape[0] == 1, "like Kimi-Audio: one sequence per forward"
        m = self.model
        x = m.embed_tokens(input_ids) + m.embed_tokens(text_input_ids)
        if whisper_input_feature is not None:
            feat = torch.cat([f.reshape(-1, FEAT) for f in whisper_input_feature], dim=0)
            mask = is_continuous_mask.bool()
            assert int(mask.sum()) == feat.shape[0], (int(mask.sum()), feat.shape)
            add = torch.zeros_like(x)
            add[mask] = m.vq_adaptor(feat.to(x.dtype))
            x = x + add
        hs = [x]
        for i, layer in enumerate(m.layers):
            x = layer(x)
            hs.append(m.norm(x) if i == len(m.layers) - 1 else x)
        h = hs[-1]
        hs.append(h * 2)                      # stands for the audio-output (MIMO) branch's states
        return CausalLMOutputWithPast(logits=(self.mimo_output(h), self.lm_head(h)),
                                      hidden_states=tuple(hs) if output_hidden_states else None)


class KimiAudio:
    def __init__(self, model_path, load_detokenizer=True):
        import json, os
        spec = json.load(open(os.path.join(model_path, "fake_kimia.json")))
        cfg = PretrainedConfig(num_hidden_layers=spec["layers"], hidden_size=spec["hidden"],
                               vocab_size=OFFSET + LEVELS, kimia_token_offset=OFFSET,
                               kimia_media_begin=MEDIA_BEGIN, kimia_media_end=MEDIA_END)
        torch.manual_seed(spec["seed"])
        self.alm = FakeKimiaForCausalLM(cfg).eval()
        self.kimia_token_offset = OFFSET
        self.prompt_manager = PromptManager()
        self.extra_tokens = self.prompt_manager.extra_tokens
        self.detokenizer = None
'''


#: Variants of the double's prompt manager: (text in the double, replacement).
SIGNATURE = 'def get_prompt(self, messages, output_type="text"):'
START = "c.add(ASSISTANT, BLANK)  # always"
VARIANTS = {
    "public": [],
    # a fork's signature (seen in finetuning code built on kimia_infer): still works, its default appends the start
    "fork": [(SIGNATURE, 'def get_prompt(self, messages, output_type="text", add_assistant_start_msg=True):'),
             (START, "if add_assistant_start_msg: c.add(ASSISTANT, BLANK)  #")],
    "no_output_type": [(SIGNATURE, 'def get_prompt(self, messages):\n        output_type = "text"')],
    "required_flag": [(SIGNATURE, 'def get_prompt(self, messages, output_type, add_assistant_start_msg):')],
    "no_assistant_start": [(START, "pass  #")],
}


def write_fake(root: Path, *, layers: int = 2, hidden: int = 32, seed: int = 0,
               variant: str = "public") -> tuple[Path, Path]:
    """Write the test double package under ``root/pkg`` and a checkpoint folder ``root/ckpt``
    (a ``config.json`` shaped like the real checkpoint's identity fields, plus the double's spec).
    ``variant`` (a key of :data:`VARIANTS`) alters the double's ``get_prompt``.

    Returns
    -------
    (package folder for sys.path, checkpoint folder)
    """
    pkg = Path(root) / "pkg"
    (pkg / "kimia_infer" / "api").mkdir(parents=True, exist_ok=True)
    (pkg / "kimia_infer" / "__init__.py").write_text('"""TEST DOUBLE of kimia_infer (see the test that wrote it)."""\n')
    (pkg / "kimia_infer" / "api" / "__init__.py").write_text("")
    source = _KIMIA
    for a, b in VARIANTS[variant]:
        assert a in source, a
        source = source.replace(a, b)
    (pkg / "kimia_infer" / "api" / "kimia.py").write_text(source)
    ckpt = Path(root) / "ckpt"
    ckpt.mkdir(parents=True, exist_ok=True)
    (ckpt / "config.json").write_text(json.dumps({
        "model_type": "kimi_audio", "architectures": ["MoonshotKimiaForCausalLM"],
        "auto_map": {"AutoModelForCausalLM": "modeling_moonshot_kimia.MoonshotKimiaForCausalLM"}}))
    (ckpt / "fake_kimia.json").write_text(json.dumps({"layers": layers, "hidden": hidden, "seed": seed}))
    return pkg, ckpt
