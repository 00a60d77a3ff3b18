#!/usr/bin/python3
"""Writes a Hugging Face checkpoint directory from one of the GGUF test models, for the converter's
round-trip tests (fixtures are made at test time, never committed).

    hf-export.py MODEL.gguf OUT_DIR [--dtype f32|bf16|f16] [--shards N]

Output: config.json, model.safetensors or N shards + model.safetensors.index.json,
tokenizer.model (SentencePiece vocabularies) or tokenizer.json (byte-level BPE),
tokenizer_config.json, generation_config.json.

Written from the public descriptions of those formats, not from our converter:
  * tensor names, shapes and config keys: transformers' modelling code for LlamaForCausalLM,
    Qwen2ForCausalLM, Qwen3ForCausalLM, Gemma3ForCausalLM and Phi3ForCausalLM (nn.Linear weights
    are [out_features, in_features]; the GGUF array of ne = [in, out] has exactly those bytes);
  * safetensors: 8-byte little-endian header length, JSON header {name: {dtype, shape,
    data_offsets}}, then the data buffer;
  * tokenizer.json: the tokenizers library's schema (model BPE with vocab/merges, added_tokens,
    pre_tokenizer Sequence[Split, ByteLevel]); tokenizer.model: sentencepiece_model.proto.

The transforms between the two conventions come from how each side computes, and are checked
here numerically (--check, on by default) rather than assumed:
  * rotary embeddings: transformers rotates the pairs (x[i], x[i + d/2]) of each head
    (rotate_half); GGML's llama rope (NORM) rotates adjacent pairs (x[2i], x[2i+1]) and its NEOX
    rope the same pairs as transformers. So llama's q/k rows are reordered per head here, and
    check_rope() computes q·k attention scores both ways -- transformers' formula on the exported
    weights, GGML's on the GGUF weights -- for random inputs and asserts they agree. A transform
    that is wrong in both this exporter and the converter would fail this check.
  * Gemma's RMSNorm multiplies by (1 + weight); GGML's multiplies by the stored weight, so the
    GGUF holds 1 + w and the checkpoint w.
Only the standard library and numpy are used (run with /usr/bin/python3).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

# ---------------------------------------------------------------------------------------------
# GGUF reading (the container spec: header, metadata kv, tensor infos, aligned data section)

GGUF_SCALAR = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f', 7: '<?', 10: '<Q', 11: '<q', 12: '<d'}
F32, F16, Q4_0, Q8_0, Q4_K, BF16 = 0, 1, 2, 8, 12, 30


def read_gguf(path):
    buf = open(path, 'rb').read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, buf, pos)[0]
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take('<Q')
        s = buf[pos:pos + n].decode('utf-8')
        pos += n
        return s

    def value(t):
        nonlocal pos
        if t == 8:
            return string()
        if t == 9:
            et, n = take('<I'), take('<Q')
            if et == 8:  # token and merge lists: hundreds of thousands of strings
                out = []
                for _ in range(n):
                    k = int.from_bytes(buf[pos:pos + 8], 'little')
                    out.append(buf[pos + 8:pos + 8 + k].decode('utf-8'))
                    pos += 8 + k
                return out
            if et in GGUF_SCALAR and et != 7:
                a = np.frombuffer(buf, GGUF_SCALAR[et], n, pos)
                pos += a.nbytes
                return a.tolist()
            return [value(et) for _ in range(n)]
        return take(GGUF_SCALAR[t])

    assert buf[:4] == b'GGUF', path
    pos = 4
    _version, n_tensors, n_kv = take('<I'), take('<Q'), take('<Q')
    meta = {}
    for _ in range(n_kv):
        k = string()
        meta[k] = value(take('<I'))
    infos = []
    for _ in range(n_tensors):
        name = string()
        nd = take('<I')
        ne = [take('<Q') for _ in range(nd)]
        infos.append((name, ne, take('<I'), take('<Q')))
    align = meta.get('general.alignment', 32)
    data = (pos + align - 1) // align * align
    tensors = {}
    for name, ne, typ, off in infos:
        tensors[name] = (ne, dequantize(buf, data + off, typ, int(np.prod(ne))).reshape(list(reversed(ne))))
    return meta, tensors


def dequantize(buf, off, typ, n):
    """GGML block layouts (ggml-common.h's block_q4_0 / block_q8_0 / block_q4_K) → float32."""
    if typ == F32:
        return np.frombuffer(buf, np.float32, n, off).copy()
    if typ == F16:
        return np.frombuffer(buf, np.float16, n, off).astype(np.float32)
    if typ == BF16:
        return (np.frombuffer(buf, np.uint16, n, off).astype(np.uint32) << 16).view(np.float32)
    if typ == Q4_0:  # 32 weights: f16 d, 16 bytes; low nibbles are 0..15, high nibbles 16..31; w = d*(q-8)
        b = np.frombuffer(buf, np.uint8, n // 32 * 18, off).reshape(-1, 18)
        d = b[:, :2].copy().view(np.float16).astype(np.float32)
        q = b[:, 2:]
        levels = np.concatenate([q & 15, q >> 4], axis=1).astype(np.float32) - 8
        return (d * levels).reshape(-1)
    if typ == Q8_0:  # 32 weights: f16 d, 32 int8; w = d*q
        b = np.frombuffer(buf, np.uint8, n // 32 * 34, off).reshape(-1, 34)
        d = b[:, :2].copy().view(np.float16).astype(np.float32)
        return (d * b[:, 2:].copy().view(np.int8).astype(np.float32)).reshape(-1)
    if typ == Q4_K:  # 256 weights: f16 d, f16 dmin, 12 bytes of 6-bit (scale, min) x8, 128 bytes
        b = np.frombuffer(buf, np.uint8, n // 256 * 144, off).reshape(-1, 144)
        d = b[:, 0:2].copy().view(np.float16).astype(np.float32)
        dmin = b[:, 2:4].copy().view(np.float16).astype(np.float32)
        s = b[:, 4:16].astype(np.int32)
        sc = np.zeros((len(b), 8), np.float32)
        mn = np.zeros((len(b), 8), np.float32)
        for j in range(8):
            if j < 4:
                sc[:, j] = s[:, j] & 63
                mn[:, j] = s[:, j + 4] & 63
            else:
                sc[:, j] = (s[:, j + 4] & 15) | ((s[:, j - 4] >> 6) << 4)
                mn[:, j] = (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)
        qs = b[:, 16:].reshape(-1, 4, 32)
        out = np.zeros((len(b), 256), np.float32)
        for c in range(4):  # 64 weights per 32 bytes: low nibbles sub-block 2c, high 2c+1
            for half, q in ((0, qs[:, c] & 15), (1, qs[:, c] >> 4)):
                j = 2 * c + half
                out[:, 64 * c + 32 * half:64 * c + 32 * half + 32] = \
                    d * sc[:, j:j + 1] * q.astype(np.float32) - dmin * mn[:, j:j + 1]
        return out.reshape(-1)
    raise SystemExit(f'unsupported GGUF tensor type {typ}')


# ---------------------------------------------------------------------------------------------
# Architecture conventions

HF_CLASS = {'llama': ('LlamaForCausalLM', 'llama'), 'qwen2': ('Qwen2ForCausalLM', 'qwen2'),
            'qwen3': ('Qwen3ForCausalLM', 'qwen3'), 'gemma3': ('Gemma3ForCausalLM', 'gemma3_text'),
            'phi3': ('Phi3ForCausalLM', 'phi3')}

LAYER_NAMES = {  # GGUF → transformers, per layer
    'attn_norm.weight': 'input_layernorm.weight',
    'attn_q.weight': 'self_attn.q_proj.weight', 'attn_k.weight': 'self_attn.k_proj.weight',
    'attn_v.weight': 'self_attn.v_proj.weight', 'attn_output.weight': 'self_attn.o_proj.weight',
    'attn_q.bias': 'self_attn.q_proj.bias', 'attn_k.bias': 'self_attn.k_proj.bias',
    'attn_v.bias': 'self_attn.v_proj.bias',
    'attn_q_norm.weight': 'self_attn.q_norm.weight', 'attn_k_norm.weight': 'self_attn.k_norm.weight',
    'attn_qkv.weight': 'self_attn.qkv_proj.weight',
    'ffn_gate.weight': 'mlp.gate_proj.weight', 'ffn_down.weight': 'mlp.down_proj.weight',
}


def hf_layer_name(arch, rest):
    if rest == 'ffn_up.weight':
        return 'mlp.gate_up_proj.weight' if arch == 'phi3' else 'mlp.up_proj.weight'
    if arch == 'gemma3':  # four norms per layer
        g = {'post_attention_norm.weight': 'post_attention_layernorm.weight',
             'ffn_norm.weight': 'pre_feedforward_layernorm.weight',
             'post_ffw_norm.weight': 'post_feedforward_layernorm.weight'}
        if rest in g:
            return g[rest]
    if rest == 'ffn_norm.weight':
        return 'post_attention_layernorm.weight'
    return LAYER_NAMES[rest]


def hf_name(arch, name):
    top = {'token_embd.weight': 'model.embed_tokens.weight', 'output_norm.weight': 'model.norm.weight',
           'output.weight': 'lm_head.weight'}
    if name in top:
        return top[name]
    _, layer, rest = name.split('.', 2)
    return f'model.layers.{layer}.{hf_layer_name(arch, rest)}'


def ggml_to_hf_rows(w, n_head):
    """GGML llama rope rows (adjacent pairs 2i, 2i+1 of each head) → transformers' (i, i + d/2)."""
    d = w.shape[0] // n_head
    return w.reshape(n_head, d // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def rope_ggml(x, pos, base, neox):
    """GGML's rope on one head vector x (d,), as ggml documents NORM and NEOX modes."""
    d = x.shape[0]
    theta = pos * base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    c, s = np.cos(theta), np.sin(theta)
    y = x.astype(np.float64).copy()
    if neox:
        a, b = x[:d // 2], x[d // 2:]
        y[:d // 2], y[d // 2:] = a * c - b * s, a * s + b * c
    else:
        a, b = x[0::2], x[1::2]
        y[0::2], y[1::2] = a * c - b * s, a * s + b * c
    return y


def rope_hf(x, pos, base):
    """transformers' apply_rotary_pos_emb: x*cos + rotate_half(x)*sin, cos = cat(freqs, freqs)."""
    d = x.shape[0]
    freqs = pos * base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    emb = np.concatenate([freqs, freqs])
    rot = np.concatenate([-x[d // 2:], x[:d // 2]])
    return x * np.cos(emb) + rot * np.sin(emb)


def check_rope(arch, meta, gguf_t, hf_t):
    """q·k scores at two positions for random inputs: transformers on the exported weights must
    equal GGML on the GGUF weights (per query head against its kv head)."""
    p = arch + '.'
    n_head, n_kv = meta[p + 'attention.head_count'], meta.get(p + 'attention.head_count_kv', meta[p + 'attention.head_count'])
    base = meta.get(p + 'rope.freq_base', 10000.0)
    neox = arch != 'llama'
    rng = np.random.default_rng(7)
    if 'blk.0.attn_qkv.weight' in gguf_t:
        qkv_g, qkv_h = gguf_t['blk.0.attn_qkv.weight'][1], hf_t['model.layers.0.self_attn.qkv_proj.weight']
        n_embd = qkv_g.shape[1]
        hd = qkv_g.shape[0] // (n_head + 2 * n_kv)
        wq_g, wk_g = qkv_g[:n_head * hd], qkv_g[n_head * hd:(n_head + n_kv) * hd]
        wq_h, wk_h = qkv_h[:n_head * hd], qkv_h[n_head * hd:(n_head + n_kv) * hd]
    else:
        wq_g, wk_g = gguf_t['blk.0.attn_q.weight'][1], gguf_t['blk.0.attn_k.weight'][1]
        wq_h = hf_t['model.layers.0.self_attn.q_proj.weight']
        wk_h = hf_t['model.layers.0.self_attn.k_proj.weight']
        hd = wq_g.shape[0] // n_head
        n_embd = wq_g.shape[1]
    xq, xk = rng.standard_normal(n_embd), rng.standard_normal(n_embd)
    pq, pk = 7, 3
    qg = (wq_g.astype(np.float64) @ xq).reshape(n_head, hd)
    kg = (wk_g.astype(np.float64) @ xk).reshape(n_kv, hd)
    qh, kh = (wq_h.astype(np.float64) @ xq).reshape(n_head, hd), (wk_h.astype(np.float64) @ xk).reshape(n_kv, hd)
    worst = 0.0
    for h in range(n_head):
        kv = h // (n_head // n_kv)
        s_g = rope_ggml(qg[h], pq, base, neox) @ rope_ggml(kg[kv], pk, base, neox)
        s_h = rope_hf(qh[h], pq, base) @ rope_hf(kh[kv], pk, base)
        worst = max(worst, abs(s_g - s_h) / (1e-6 + abs(s_g)))
    if worst > 1e-6:
        raise SystemExit(f'rope convention check failed for {arch}: relative score difference {worst:.3g}')


# ---------------------------------------------------------------------------------------------
# Writing

ST_DTYPE = {'f32': ('F32', np.float32), 'f16': ('F16', np.float16), 'bf16': ('BF16', None)}


def to_dtype(a, dtype):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == 'bf16':  # round to nearest even, as torch's float → bfloat16
        bits = a.view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        return bits
    return a.astype(ST_DTYPE[dtype][1])


def write_safetensors(path, tensors, dtype):
    header, blobs, off = {'__metadata__': {'format': 'pt'}}, [], 0
    for name, a in tensors:
        b = to_dtype(a, dtype).tobytes()
        header[name] = {'dtype': ST_DTYPE[dtype][0], 'shape': list(a.shape), 'data_offsets': [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)  # the format allows trailing spaces; keeps data 8-aligned
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return off


def pb_varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_field(num, wire, payload):
    key = pb_varint((num << 3) | wire)
    if wire == 2:
        return key + pb_varint(len(payload)) + payload
    return key + payload


def write_spm_model(path, pieces, trainer, normalizer):
    """sentencepiece_model.proto: ModelProto{1: pieces, 2: trainer_spec, 3: normalizer_spec}."""
    out = bytearray()
    for text, score, typ in pieces:
        p = pb_field(1, 2, text.encode()) + pb_field(2, 5, struct.pack('<f', score)) + pb_field(3, 0, pb_varint(typ))
        out += pb_field(1, 2, p)
    t = b''.join(pb_field(k, 0, pb_varint(v)) for k, v in trainer)
    n = pb_field(1, 2, b'identity') + b''.join(pb_field(k, 0, pb_varint(v)) for k, v in normalizer)
    out += pb_field(2, 2, t) + pb_field(3, 2, n)
    open(path, 'wb').write(bytes(out))


# The regex of Qwen2's published tokenizer.json pre_tokenizer (Split, Isolated).
QWEN2_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def export_tokenizer(meta, out, merges_as_pairs):
    toks = meta['tokenizer.ggml.tokens']
    types = meta['tokenizer.ggml.token_type']
    scores = meta.get('tokenizer.ggml.scores')
    is_pad = [t.startswith('[PAD') and typ in (2, 5) for t, typ in zip(toks, types)]
    ids = {k: meta.get('tokenizer.ggml.' + k + '_token_id') for k in ('bos', 'eos', 'unknown', 'padding')}
    ids = {k: (v if v is not None and v < len(toks) else None) for k, v in ids.items()}  # GGUF writes "none" as -1
    cfg = {'tokenizer_class': 'PreTrainedTokenizerFast'}
    for key, gk in (('bos_token', 'bos'), ('eos_token', 'eos'), ('unk_token', 'unknown'), ('pad_token', 'padding')):
        cfg[key] = toks[ids[gk]] if ids[gk] is not None else None
    for k in ('add_bos_token', 'add_eos_token'):
        if 'tokenizer.ggml.' + k in meta:
            cfg[k] = bool(meta['tokenizer.ggml.' + k])
    if 'tokenizer.chat_template' in meta:
        cfg['chat_template'] = meta['tokenizer.chat_template']
    decoder = {}
    if meta['tokenizer.ggml.model'] == 'llama':
        # Added tokens (score -1000: control or user-defined) beyond the SentencePiece vocabulary
        # and the padding are not pieces of tokenizer.model; the ones inside are both.
        n_sp = len(toks)
        while n_sp > 0 and (is_pad[n_sp - 1] or (types[n_sp - 1] in (3, 4) and scores[n_sp - 1] == -1000.0)):
            n_sp -= 1
        pieces = [(toks[i], scores[i], types[i]) for i in range(n_sp)]
        trainer = [(3, 2), (4, n_sp), (35, int(any(t == 6 for t in types)))]
        for field, gk in ((40, 'unknown'), (41, 'bos'), (42, 'eos'), (43, 'padding')):
            trainer.append((field, ids[gk] if ids[gk] is not None and ids[gk] < n_sp else -1))
        normalizer = [(3, int(meta.get('tokenizer.ggml.add_space_prefix', True))), (4, 0), (5, 1)]
        write_spm_model(os.path.join(out, 'tokenizer.model'), pieces, trainer, normalizer)
        for i, (typ, sc) in enumerate(zip(types, scores)):
            if typ in (3, 4) and sc == -1000.0:
                decoder[str(i)] = {'content': toks[i], 'special': typ == 3, 'lstrip': False, 'rstrip': False,
                                   'normalized': False, 'single_word': False}
    else:
        pre = meta.get('tokenizer.ggml.pre')
        if pre != 'qwen2':
            raise SystemExit(f'no tokenizer.json pre-tokenizer for {pre}')
        vocab = {t: i for i, (t, typ) in enumerate(zip(toks, types)) if typ == 1}
        added = [{'id': i, 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False,
                  'normalized': False, 'special': typ == 3}
                 for i, (t, typ) in enumerate(zip(toks, types)) if typ in (3, 4)]
        merges = meta['tokenizer.ggml.merges']
        tj = {'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added,
              'normalizer': {'type': 'NFC'},
              'pre_tokenizer': {'type': 'Sequence', 'pretokenizers': [
                  {'type': 'Split', 'pattern': {'Regex': QWEN2_SPLIT}, 'behavior': 'Isolated', 'invert': False},
                  {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False}]},
              'post_processor': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False},
              'decoder': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False},
              'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                        'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False,
                        'vocab': vocab, 'merges': [m.split(' ', 1) for m in merges] if merges_as_pairs else merges}}
        with open(os.path.join(out, 'tokenizer.json'), 'w', encoding='utf-8') as f:
            f.write(json.dumps(tj, ensure_ascii=False))  # dumps: the C encoder
        for a in added:
            decoder[str(a['id'])] = {k: a[k] for k in ('content', 'special', 'lstrip', 'rstrip', 'normalized', 'single_word')}
        cfg['clean_up_tokenization_spaces'] = False
    if decoder:
        cfg['added_tokens_decoder'] = decoder
    with open(os.path.join(out, 'tokenizer_config.json'), 'w', encoding='utf-8') as f:
        f.write(json.dumps(cfg, ensure_ascii=False))
    return ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('gguf')
    ap.add_argument('out')
    ap.add_argument('--dtype', default='f32', choices=['f32', 'bf16', 'f16'])
    ap.add_argument('--shards', type=int, default=1)
    ap.add_argument('--merges-as-pairs', action='store_true')
    ap.add_argument('--no-check', action='store_true')
    a = ap.parse_args()

    meta, gguf_t = read_gguf(a.gguf)
    arch = meta['general.architecture']
    cls, model_type = HF_CLASS[arch]
    p = arch + '.'
    n_head = meta[p + 'attention.head_count']
    n_kv = meta.get(p + 'attention.head_count_kv', n_head)
    n_embd = meta[p + 'embedding_length']
    head_dim = meta.get(p + 'attention.key_length', n_embd // n_head)
    tied = 'output.weight' not in gguf_t

    hf_t = {}
    for name, (ne, w) in gguf_t.items():
        if name == 'rope_freqs.weight':
            continue
        if arch == 'llama' and name.endswith(('attn_q.weight', 'attn_k.weight')):
            w = ggml_to_hf_rows(w, n_head if 'attn_q' in name else n_kv)
        if arch == 'gemma3' and name.endswith('norm.weight'):
            w = w - np.float32(1)
        hf_t[hf_name(arch, name)] = w
    if not a.no_check:
        check_rope(arch, meta, gguf_t, hf_t)

    os.makedirs(a.out, exist_ok=True)
    n_vocab = gguf_t['token_embd.weight'][0][1]
    config = {'architectures': [cls], 'model_type': model_type,
              'hidden_size': n_embd, 'intermediate_size': meta[p + 'feed_forward_length'],
              'num_hidden_layers': meta[p + 'block_count'], 'num_attention_heads': n_head,
              'num_key_value_heads': n_kv, 'max_position_embeddings': meta[p + 'context_length'],
              'rms_norm_eps': meta[p + 'attention.layer_norm_rms_epsilon'],
              'rope_theta': meta.get(p + 'rope.freq_base', 10000.0), 'vocab_size': n_vocab,
              'tie_word_embeddings': tied, 'torch_dtype': {'f32': 'float32', 'bf16': 'bfloat16', 'f16': 'float16'}[a.dtype],
              'hidden_act': 'gelu_pytorch_tanh' if arch == 'gemma3' else 'silu'}
    if p + 'attention.key_length' in meta or head_dim * n_head != n_embd:
        config['head_dim'] = head_dim
    if arch == 'qwen2':
        config['use_sliding_window'] = False
    if arch == 'gemma3':
        config['sliding_window'] = meta[p + 'attention.sliding_window']
        config['rope_local_base_freq'] = meta.get(p + 'rope.freq_base_swa', 10000.0)
        config['query_pre_attn_scalar'] = head_dim
        config['layer_types'] = ['sliding_attention' if i % 6 < 5 else 'full_attention'
                                 for i in range(meta[p + 'block_count'])]
    if arch == 'phi3':
        config['original_max_position_embeddings'] = meta.get(p + 'rope.scaling.original_context_length',
                                                               meta[p + 'context_length'])
        config['partial_rotary_factor'] = meta.get(p + 'rope.dimension_count', head_dim) / head_dim
        if p + 'attention.sliding_window' in meta:
            config['sliding_window'] = meta[p + 'attention.sliding_window']
        config['rope_scaling'] = None

    ids = export_tokenizer(meta, a.out, a.merges_as_pairs)
    for k, gk in (('bos_token_id', 'bos'), ('eos_token_id', 'eos'), ('pad_token_id', 'padding')):
        if ids[gk] is not None:
            config[k] = ids[gk]
    with open(os.path.join(a.out, 'config.json'), 'w') as f:
        json.dump(config, f, indent=1)
    gen = {k: config[k] for k in ('bos_token_id', 'eos_token_id', 'pad_token_id') if k in config}
    with open(os.path.join(a.out, 'generation_config.json'), 'w') as f:
        json.dump(gen, f, indent=1)

    # Shards hold whole tensors in checkpoint order, each shard about the same size.
    items = list(hf_t.items())
    if a.shards <= 1:
        write_safetensors(os.path.join(a.out, 'model.safetensors'), items, a.dtype)
        return
    total = sum(v.size for _, v in items)
    groups, cur, acc = [], [], 0
    for it in items:
        cur.append(it)
        acc += it[1].size
        if acc >= total * (len(groups) + 1) / a.shards and len(groups) < a.shards - 1:
            groups.append(cur)
            cur = []
    groups.append(cur)
    weight_map, size = {}, 0
    for i, g in enumerate(groups):
        fname = f'model-{i + 1:05d}-of-{len(groups):05d}.safetensors'
        size += write_safetensors(os.path.join(a.out, fname), g, a.dtype)
        for name, _ in g:
            weight_map[name] = fname
    with open(os.path.join(a.out, 'model.safetensors.index.json'), 'w') as f:
        json.dump({'metadata': {'total_size': size}, 'weight_map': weight_map}, f, indent=1)


if __name__ == '__main__':
    sys.exit(main())
