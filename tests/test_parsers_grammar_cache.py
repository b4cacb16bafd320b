"""The message grammar's LALR tables are kept in the user's cache (parsers/lark_loader.py): a
process that parses messages loads them instead of building them, and parses the same."""

from __future__ import annotations

from commitsleuth.cache import CACHE_ENV
from commitsleuth.parsers import lark_loader, messages

LINES = ["Loading data to table db.t partition (ds=1) from hdfs://nn/x",
         "Moved: 'hdfs://nn/warehouse/db.db/t/ds=1/000000_0' to trash at: hdfs://nn/user/hive/.Trash/Current"]


def _build(name: str):
    return lark_loader.grammar.__wrapped__(name, messages._TRANSFORMER)


def test_the_tables_are_cached_in_the_users_cache_and_parse_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    built = _build("messages")
    cached = list((tmp_path / "cache").glob("lark-messages-*.cache"))
    assert len(cached) == 1
    made = cached[0].stat().st_mtime_ns
    loaded = _build("messages")
    assert cached[0].stat().st_mtime_ns == made  # read, not written again
    for line in LINES:
        assert loaded.parse(line) == built.parse(line) == messages.parse_message(line)
    assert loaded.parse(LINES[0])["kind"] == "load"


def test_a_damaged_cache_file_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    _build("messages")
    (cached,) = (tmp_path / "cache").glob("lark-messages-*.cache")
    cached.write_bytes(cached.read_bytes()[:200])
    assert _build("messages").parse(LINES[0]) == messages.parse_message(LINES[0])


def test_no_cache_where_the_directory_cannot_be_made(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(CACHE_ENV, str(blocked / "cache"))
    assert _build("messages").parse(LINES[0]) == messages.parse_message(LINES[0])
