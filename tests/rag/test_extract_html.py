from __future__ import annotations

from kforge.rag.extract import extract

PAGE = b"""<!doctype html><html><head><title>Agent Notes</title>
<style>p { color: red }</style><script>var secret = 1;</script></head>
<body><nav>Menu</nav><h1>Durable <em>runs</em></h1>
<p>Checkpoints let a run   resume
after a crash.</p><ul><li>one</li><li>two</li></ul>
<h2>Resume</h2><p>Resume from the last step &amp; continue.<br>Next line.</p>
<pre>code
  indented</pre></body></html>"""


def test_visible_text_only_with_paragraph_breaks() -> None:
    doc = extract("notes.html", PAGE)
    assert doc.title == "Agent Notes"
    assert "secret" not in doc.text and "color" not in doc.text
    assert "Checkpoints let a run resume after a crash." in doc.text
    assert "one\ntwo" in doc.text  # a list item per line
    assert "Resume from the last step & continue.\nNext line." in doc.text
    assert "code\n  indented" in doc.text


def test_headings_point_at_their_text() -> None:
    doc = extract("notes.html", PAGE)
    assert [s.heading for s in doc.sections] == ["Durable runs", "Durable runs > Resume"]
    for section in doc.sections:
        assert doc.text[section.start : section.body_start] == section.heading.split(" > ")[-1]


def test_broken_html_still_yields_text() -> None:
    doc = extract("broken.html", b"<p>unclosed <b>bold <div>text</p></span>")
    assert "unclosed bold" in doc.text and "text" in doc.text


def test_unclosed_head_and_title_do_not_swallow_the_body() -> None:
    doc = extract("x.html", b"<html><head><title>Quick<meta charset=utf-8><body><p>Body text.</p>")
    assert doc.title == "Quick"
    assert doc.text == "Body text."
    doc = extract("y.html", b"<head><title></title></head><p>Only body.</p>")
    assert doc.title == "Y" and doc.text == "Only body."


def test_page_chrome_is_left_out() -> None:
    doc = extract("x.html", PAGE.replace(b"<pre>", b"<footer>(c) 2024</footer><pre>"))
    assert "Menu" not in doc.text and "2024" not in doc.text
