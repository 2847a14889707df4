"""The content-addressed reply store (measure.extract.store)."""

from measure.extract.store import ReplyStore, reply_key


def test_key_depends_on_everything_that_decides_a_reply():
    base = reply_key("anthropic", "m", {"temperature": 0.0}, "ab" * 32, 0)
    assert base == reply_key("anthropic", "m", {"temperature": 0.0}, "ab" * 32, 0)
    others = {
        reply_key("openai", "m", {"temperature": 0.0}, "ab" * 32, 0),
        reply_key("anthropic", "n", {"temperature": 0.0}, "ab" * 32, 0),
        reply_key("anthropic", "m", {"temperature": 1.0}, "ab" * 32, 0),
        reply_key("anthropic", "m", {"temperature": 0.0}, "cd" * 32, 0),
        reply_key("anthropic", "m", {"temperature": 0.0}, "ab" * 32, 1),
    }
    assert base not in others and len(others) == 5


def test_put_get_atomic_and_damaged_entries(tmp_path):
    store = ReplyStore(tmp_path)
    key = "ab" * 32
    assert store.get(key) is None
    store.put(key, {"reply": "x"})
    assert store.get(key) == {"reply": "x"}
    assert not [p for p in (tmp_path / "store").rglob("*.tmp")]
    (tmp_path / "store" / key[:2] / f"{key}.json").write_text("{broken")
    assert store.get(key) is None
