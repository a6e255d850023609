"""Answers over API manuals built with Sphinx and MkDocs (a template engine's, a terminal
automation library's, a Markdown converter's): code blocks holding blank lines and template
markup, sentences saying how in words ("using the filename keyword argument:", "To apply more
than one filter, separate them by a comma:"), examples showing what a template renders after
"will render:", what a named method or thing does, and the choice marked as the default."""

from __future__ import annotations

from kforge.rag.compose import compose_extractive
from kforge.rag.defining import defined_subject, defines_subject
from kforge.rag.focus import question_focus
from kforge.rag.kinds import holds_kind
from kforge.rag.question import read_question
from kforge.rag.rerank import rerank_hits
from kforge.rag.short_answer import short_answer
from kforge.rag.types import SearchHit
from kforge.rag.units import passage_units
from tests.rag.helpers import page_chunk as chunk

FILE_BASED = chunk(
    0,
    "Using File-Based Templates\n\n"
    "A Template can also load its template source code from a file, using the filename "
    "keyword argument:\n\n"
    "from mako.template import Template\n\n"
    "mytemplate = Template(filename='/docs/mytmpl.txt')\n"
    "print(mytemplate.render())\n\n"
    "For improved performance, a Template which is loaded from a file can also cache the "
    "source code to its generated module on the filesystem as a regular Python module file.",
    "Usage",
    "Using File-Based Templates",
)
LOOKUP = chunk(
    1,
    "Using TemplateLookup\n\n"
    "A real application would get most or all of its templates directly from the "
    "TemplateLookup, using the aptly named TemplateLookup.get_template() method, which "
    "accepts the URI of the desired template file.\n\n"
    "By default, the TemplateLookup size is unbounded.\n\n"
    "The above lookup will continue to load templates into memory until it reaches a count "
    "of around 500.",
    "Usage",
    "Using TemplateLookup",
)
FILTERS = chunk(
    2,
    "Expression Filtering\n\n"
    "The above expression applies URL escaping to the expression, and produces "
    "this+is+some+text.\n\n"
    "The built-in escape flags are:\n\n"
    "u : URL escaping, provided by urllib.quote_plus(string.encode('utf-8'))\n"
    "h : HTML escaping, provided by markupsafe.escape(string)\n"
    "n : disable all default filtering; only filters specified in the local expression tag "
    "will be applied.\n\n"
    "To apply more than one filter, separate them by a comma:",
    "Filtering and Buffering",
    "Expression Filtering",
)
DOGPILE = chunk(
    3,
    "Using the dogpile.cache Backend\n\n"
    "dogpile.cache is a new replacement for Beaker. It provides a modernized, slimmed down "
    "interface and is generally easier to use than Beaker.",
    "Caching",
    "Using the dogpile.cache Backend",
)
CACHING = chunk(
    4,
    "Caching\n\n"
    "The caching system requires that a cache backend be installed; this includes either the "
    "Beaker package or the dogpile.cache, as well as any other third-party caching libraries. "
    "To use dogpile.cache, the cache_impl argument must be set; see this argument in the "
    "section Cache Arguments.",
    "Caching",
    "Caching",
)
DEFS = chunk(
    5,
    "Using Defs\n\n"
    "The <%def> tag requires a name attribute, where the name references a Python function "
    "signature:\n\n"
    '<%def name="hello()">\n    hello world\n</%def>\n\n'
    "To invoke the <%def>, it is normally called as an expression, and will render:\n\n"
    "<p>\n    hello world\n</p>",
    "Defs and Blocks",
    "Using Defs",
)


def _texts(question: str, passages: list) -> list[str]:
    return [s.text for s in compose_extractive(question, passages)]


def test_a_code_block_with_a_blank_line_in_it_is_one_unit_of_code() -> None:
    units = passage_units(FILE_BASED.text)
    code = [u.text for u in units if u.kind == "code"]
    assert code == [
        "from mako.template import Template\n\n"
        "mytemplate = Template(filename='/docs/mytmpl.txt')\nprint(mytemplate.render())"
    ], units
    assert code[0] in FILE_BASED.text  # quoted exactly, its blank line kept


def test_template_markup_lines_are_code() -> None:
    units = passage_units(DEFS.text)
    assert ("code", '<%def name="hello()">\n    hello world\n</%def>') in [
        (u.kind, u.text) for u in units
    ], units


def test_a_sentence_saying_which_argument_leads_its_code() -> None:
    texts = _texts("How do I load a template from a file?", [FILE_BASED, LOOKUP])
    said = "\n".join(texts)
    assert "using the filename keyword argument:" in said, texts
    assert "Template(filename='/docs/mytmpl.txt')" in said, texts


def test_a_sentence_opening_with_what_is_asked_says_how() -> None:
    texts = _texts("How do I apply more than one filter?", [FILTERS])
    assert "To apply more than one filter, separate them by a comma:" in texts, texts
    # the page's own answer, though the passage it stands in is not the first found
    texts = _texts("How do I use dogpile.cache for caching?", [DOGPILE, CACHING])
    assert texts[0].startswith("To use dogpile.cache, the cache_impl argument"), texts


def test_what_an_example_renders_is_not_the_way_to_do_it() -> None:
    texts = _texts("How do I define a def?", [DEFS])
    assert '<%def name="hello()">\n    hello world\n</%def>' in texts, texts
    assert not any(t.startswith("<p>") for t in texts), texts


def test_no_limit_is_a_quantity() -> None:
    asked = read_question("What is the default size of a TemplateLookup?")
    assert holds_kind("By default, the TemplateLookup size is unbounded.", asked)
    assert holds_kind("There is no limit on the number of connections.", asked)
    assert not holds_kind("The size depends on the templates.", asked)
    question = "What is the default size of a TemplateLookup?"
    segments = compose_extractive(question, [LOOKUP])
    assert segments[0].text == "By default, the TemplateLookup size is unbounded.", segments
    line = short_answer(question, segments, [LOOKUP])
    assert line is not None and line.answer == "unbounded", line


OVERVIEW = chunk(
    6,
    "API Overview\n\n"
    "There are two important methods in Pexpect: expect() and send() (or sendline() which is "
    "like send() with a linefeed). The expect() method waits for the child application to "
    "return a given string. The send() method writes a string to the child application.",
    "API Overview",
    "API Overview",
)
SENDLINE = chunk(
    7,
    "spawn class\n\n"
    "sendline(s=''): Wraps send(), sending string s to child process, with os.linesep "
    "automatically appended. Returns number of bytes written.",
    "Core pexpect components",
    "spawn class",
)


def test_what_a_named_method_does_is_said_by_a_sentence_opening_with_it() -> None:
    question = "What does the send() method do?"
    texts = _texts(question, [OVERVIEW, SENDLINE])
    assert "The send() method writes a string to the child application." in texts, texts
    # and the passage holding it is read first, though the search found the other first
    hits = [SearchHit(SENDLINE, 2.0, 1), SearchHit(OVERVIEW, 1.0, 2)]
    ranked = rerank_hits(question_focus(question), hits, 2)
    assert ranked[0].chunk is OVERVIEW, ranked


def test_a_call_named_with_its_parentheses_opens_a_sentence_defining_it() -> None:
    subject = defined_subject(read_question("What is the send() method?"))
    said = "The send() method writes a string to the child application."
    assert defines_subject(said, subject) > 0
    # another name holding the same word is not it
    assert defines_subject("The send_eof() method is gone.", subject) == 0


def test_what_a_thing_does_is_said_by_a_sentence_opening_with_it() -> None:
    listing = chunk(
        8,
        "Bash\n\nThe lexer for Bash shell sessions reads command lines, each after its "
        "prompt, and the output between them.",
        "Available lexers",
        "Bash",
    )
    architecture = chunk(
        9,
        "Architecture\n\n"
        "There are four types of components that work together highlighting a piece of code. "
        "A lexer splits the source into tokens, fragments of the source that have a token type. "
        "A formatter then takes the token stream and writes it to an output file.",
        "Introduction and Quickstart",
        "Architecture",
    )
    question = "What does a lexer do?"
    texts = _texts(question, [listing, architecture])
    assert any(t.startswith("A lexer splits the source into tokens") for t in texts), texts
    hits = [SearchHit(listing, 2.0, 1), SearchHit(architecture, 1.0, 2)]
    assert rerank_hits(question_focus(question), hits, 2)[0].chunk is architecture


def test_what_must_be_done_with_the_way_comes_with_it() -> None:
    details = chunk(
        10,
        "The Details\n\n"
        "If you're processing one document at a time, these functions will serve your needs. "
        "However, if you need to process multiple documents, it may be advantageous to create a "
        "single instance of the markdown.Markdown class and pass multiple documents through it. "
        "If you do use a single instance though, make sure to call the reset method "
        "appropriately (see below).",
        "Library Reference",
        "The Details",
    )
    texts = _texts("How do I process several documents with one Markdown instance?", [details])
    assert any("make sure to call the reset method" in t for t in texts), texts


def test_an_api_entrys_next_sentence_says_what_it_returns() -> None:
    entries = chunk(
        11,
        "PopenSpawn class\n\n"
        "sendeof(): Closes the stdin pipe from the writing end.\n"
        "wait(): Wait for the subprocess to finish.\n\n"
        "Returns the exit code.\n\n"
        "expect(), expect_exact(), expect_list(): As pexpect.spawn.",
        "popen_spawn",
        "PopenSpawn class",
    )
    texts = _texts("What does wait() return for PopenSpawn?", [entries])
    assert "Returns the exit code." in texts, texts


def test_a_sentence_naming_the_attribute_to_define_says_how() -> None:
    labels = chunk(
        12,
        "Custom Labels\n\n"
        "In most cases, the text label in the Table of Contents should match the text of the "
        "header. In that case, if this extension is used with the Attribute Lists Extension and "
        "a data-toc-label attribute is defined on the header, then the contents of that "
        "attribute will be used as the text label for the item in the Table of Contents.",
        "Table of Contents",
        "Custom Labels",
    )
    texts = _texts("How do I set a custom label for a header in the table of contents?", [labels])
    assert "data-toc-label" in texts[0], texts


def test_the_choice_marked_default_answers_what_the_default_is() -> None:
    asked = read_question("What is the default output format?")
    assert holds_kind('"xhtml": Outputs XHTML style tags. Default.', asked)
    assert holds_kind("html5 (the default) and xhtml", asked)
    assert not holds_kind('"html5": Outputs HTML style tags.', asked)
    assert not holds_kind("A default is given.", read_question("How many formats are there?"))
    options = chunk(
        13,
        "markdown.markdown\n\n"
        "output_format: Format of output. Supported formats are:\n\n"
        '"xhtml": Outputs XHTML style tags. Default.\n'
        '"html5": Outputs HTML style tags.\n\n'
        "The values can be in either lowercase or uppercase.",
        "Library Reference",
        "markdown.markdown",
    )
    question = "What is the default output format?"
    segments = compose_extractive(question, [options])
    assert any(s.text.startswith('"xhtml"') for s in segments), segments
    line = short_answer(question, segments, [options])
    assert line is not None and line.answer == '"xhtml"', line


def test_a_yes_no_phrase_starts_after_a_closed_parenthesis_and_ends_at_and() -> None:
    threads = chunk(
        14,
        "Threads\n\nOn Linux (RH 8) you cannot spawn a child from a different thread and pass "
        "the handle back to a worker thread. The child is successfully spawned but you can't "
        "interact with it.",
        "Common problems",
        "Threads",
    )
    question = "Can I spawn a child in one thread and use it from another thread?"
    segments = compose_extractive(question, [threads])
    line = short_answer(question, segments, [threads])
    assert line is not None, segments
    assert (line.answer, line.quote) == ("No.", "you cannot spawn a child from a different thread")
