"""The word pools, fixed texts and templates of all generated text, loaded from vocab.toml."""

import tomllib
from pathlib import Path

_TOML = tomllib.loads(Path(__file__).with_name("vocab.toml").read_text(encoding="utf-8"))

NOUNS, VERBS, PAST, ADJS = (tuple(_TOML[k].split()) for k in ("nouns", "verbs", "past", "adjs"))
SENTENCES, HUMAN_PROMPTS = (tuple(_TOML[k].splitlines()) for k in ("sentences", "human_prompts"))
OPENERS, HEADINGS, SEVERITY, NON_ASCII, USERS, PROJECT_NAMES, DESCRIPTIONS = (
    tuple(_TOML[k]) for k in ("openers", "headings", "severity", "non_ascii", "users", "project_names", "descriptions"))
MALWARE_REMINDER, CAVEAT, MODERN_NOTE, COMPACT_PREFIX = (
    _TOML[k] for k in ("malware_reminder", "caveat", "modern_note", "compact_prefix"))
LAUNCHED = _TOML["launched"]  # a background agent's launch result per era: "agent", "modern", "classic"
STOPPED = {fate: tuple(texts) for fate, texts in _TOML["stopped"].items()}  # (content, toolUseResult) by fate
CODE_TEMPLATES = {lang: {k: tuple(v) for k, v in parts.items()} for lang, parts in _TOML["code"].items()}
TYPE_NAMES, DIRS = ({lang: tuple(v) for lang, v in _TOML[k].items()} for k in ("type_names", "dirs"))

LANGS = ("go", "python", "typescript", "elixir", "rust")
EXT = {"go": ".go", "python": ".py", "typescript": ".ts", "elixir": ".ex", "rust": ".rs"}

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
HEX = "0123456789abcdef"
LOWER_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyz"
