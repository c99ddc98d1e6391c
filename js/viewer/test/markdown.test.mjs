// The viewer's markdown subset (markdown.ts): what it parses, and that text which is not markdown comes out as the
// same characters. It runs the compiled module the binary embeds; building DOM from the tree is the browser tests'.
import assert from "node:assert/strict";
import { test } from "node:test";

import { inlines, parseMarkdown, plainText } from "../../../crates/a13n-stream-server/src/viewer/assets/viewer/src/markdown.js";

const text = (value) => ({ type: "text", text: value });

test("a model's ordinary text is one paragraph holding the same characters", () => {
  // The words the repository's Harness runs are made of: quotes, backslashes, tabs, line breaks, emoji.
  const words = 'the agent résumé naïve 東京 emoji 🚀 quotes " backslash \\ tab\t newline\n done 2×3 snake_case_name a_b_c'.split(" ");
  for (let seed = 1; seed <= 200; seed += 1) {
    let state = seed;
    const pick = () => words[(state = (state * 1103515245 + 12345) % 2147483648) % words.length];
    const source = Array.from({ length: 40 }, pick).join(" ");
    const blocks = parseMarkdown(source);
    // (A last line break ends the last paragraph: it is not shown.)
    assert.equal(plainText(blocks), source.replace(/\n$/, ""), source);
    assert.ok(blocks.every((block) => block.type === "paragraph"), source);
  }
});

test("headings, rules, quotes and paragraphs", () => {
  const blocks = parseMarkdown("# Title #\n\nFirst line\nsecond line\n\n---\n> quoted\n> more\n\n###### small");
  assert.deepEqual(blocks, [
    { type: "heading", level: 1, children: [text("Title")] },
    { type: "paragraph", children: [text("First line\nsecond line")] },
    { type: "rule" },
    { type: "quote", children: [{ type: "paragraph", children: [text("quoted\nmore")] }] },
    { type: "heading", level: 6, children: [text("small")] },
  ]);
});

test("fenced code keeps its text as written, and an unclosed fence runs to the end (as while it streams)", () => {
  assert.deepEqual(parseMarkdown("Before\n```python\nprint('**not bold**')\n\n  indented\n```\nAfter"), [
    { type: "paragraph", children: [text("Before")] },
    { type: "code", lang: "python", text: "print('**not bold**')\n\n  indented" },
    { type: "paragraph", children: [text("After")] },
  ]);
  assert.deepEqual(parseMarkdown("~~~\nstill streaming"), [{ type: "code", lang: "", text: "still streaming" }]);
  assert.deepEqual(parseMarkdown("````\n```\n````"), [{ type: "code", lang: "", text: "```" }]);
});

test("lists, nested and numbered", () => {
  const blocks = parseMarkdown("- one\n- two\n  - inner\n- three\ncontinued\n\n3. third\n4) fourth");
  assert.deepEqual(blocks, [
    {
      type: "list",
      ordered: false,
      start: 1,
      items: [
        [{ type: "paragraph", children: [text("one")] }],
        [
          { type: "paragraph", children: [text("two")] },
          { type: "list", ordered: false, start: 1, items: [[{ type: "paragraph", children: [text("inner")] }]] },
        ],
        [{ type: "paragraph", children: [text("three\ncontinued")] }],
      ],
    },
    {
      type: "list",
      ordered: true,
      start: 3,
      items: [[{ type: "paragraph", children: [text("third")] }], [{ type: "paragraph", children: [text("fourth")] }]],
    },
  ]);
});

test("tables with their columns' alignment; a row short of cells is filled", () => {
  const [table] = parseMarkdown("| id | name | score |\n|:---|:---:|---:|\n| 1 | `a` | 9 |\n| 2 |");
  assert.deepEqual(table, {
    type: "table",
    align: ["left", "center", "right"],
    head: [[text("id")], [text("name")], [text("score")]],
    rows: [
      [[text("1")], [{ type: "code", text: "a" }], [text("9")]],
      [[text("2")], [], []],
    ],
  });
  // A line with a bar but no delimiter row under it is a paragraph.
  assert.deepEqual(parseMarkdown("a | b\nc"), [{ type: "paragraph", children: [text("a | b\nc")] }]);
});

test("inline spans: code, strong, emphasis, strikethrough, links", () => {
  assert.deepEqual(inlines("**bold** and *it* and __b__ and _i_ ~~gone~~ `a*b*c`"), [
    { type: "strong", children: [text("bold")] },
    text(" and "),
    { type: "em", children: [text("it")] },
    text(" and "),
    { type: "strong", children: [text("b")] },
    text(" and "),
    { type: "em", children: [text("i")] },
    text(" "),
    { type: "del", children: [text("gone")] },
    text(" "),
    { type: "code", text: "a*b*c" },
  ]);
  assert.deepEqual(inlines("see [the docs](https://example.com/a_b) or https://example.com/x."), [
    text("see "),
    { type: "link", href: "https://example.com/a_b", children: [text("the docs")] },
    text(" or "),
    { type: "link", href: "https://example.com/x", children: [text("https://example.com/x")] },
    text("."),
  ]);
  // Not spans: a lone marker, markers around spaces, underscores inside words, an unclosed code span.
  for (const plain of ["2 * 3 * 4", "snake_case_name", "a ** b ** c", "`open", "[not a link]", "* x*"]) {
    assert.deepEqual(inlines(plain), [text(plain)], plain);
  }
});

test("a link's address is kept as written: the page links only http(s) addresses (dom.ts safeLink)", () => {
  assert.deepEqual(inlines("[x](javascript:alert(1))"), [text("[x](javascript:alert(1))")]);
  assert.deepEqual(inlines("[x](javascript:void)"), [{ type: "link", href: "javascript:void", children: [text("x")] }]);
});

test("adversarial text is read in time linear in its length, and deep nesting is taken as text, not a stack overflow", () => {
  // Found by the review: an opener without a closer scanned every later marker (100 KB of "*a " took 13 s), and
  // about 5,000 levels of ">" or "- " overflowed the stack, so "Show all" froze the page or did nothing.
  for (const unit of ["*a ", "_a ", "~~a ", "[", "h ", "[a](b"]) {
    // Openers that never close: the text as it is.
    const source = unit.repeat(Math.ceil(100_000 / unit.length));
    assert.ok(plainText(parseMarkdown(source)) === source, JSON.stringify(unit));
  }
  for (const unit of ["**a ", "``a`", "*_`[~", "a*b_c~~d`e[f](g)"]) {
    const source = unit.repeat(Math.ceil(100_000 / unit.length));
    assert.ok(plainText(parseMarkdown(source)).length > 0, JSON.stringify(unit));
  }
  for (const unit of [">", "> ", "- ", "1. ", "**", "*_"]) {
    const source = `${unit.repeat(20_000)}deep`;
    assert.ok(plainText(parseMarkdown(source)).endsWith("deep"), JSON.stringify(unit));
  }
  assert.deepEqual(inlines("``a ``` b``"), [{ type: "code", text: "a ``` b" }], "a code span closes only at a run of its own length");
  const [link] = inlines("[see https://example.com/x](https://example.com/y)");
  assert.ok(link.children.every((span) => span.type === "text"), "a link holds no link");
  assert.equal(link.children.map((span) => span.text).join(""), "see https://example.com/x");
});

test("any text of markdown's characters parses, and shows no character the text does not hold", () => {
  // A property over generated texts (a fixed seed, so a failure repeats): parsing never throws, and what is shown is
  // made of the text's own characters (markers may go; nothing is invented).
  const alphabet = ["*", "_", "~", "`", "[", "]", "(", ")", "#", ">", "-", "1.", "|", ":", "\n", "\n\n", " ", "  ", "\t", "a", "é", "🚀", "http://x.y/z", "https://", "\\"];
  let state = 42;
  const next = (bound) => (state = (state * 1103515245 + 12345) % 2147483648) % bound;
  for (let round = 0; round < 3000; round += 1) {
    const source = Array.from({ length: next(120) }, () => alphabet[next(alphabet.length)]).join("");
    const shown = plainText(parseMarkdown(source));
    const held = new Set(source);
    for (const char of shown) {
      if (char !== "\n" && !held.has(char)) assert.fail(`${JSON.stringify(char)} shown from ${JSON.stringify(source)}`);
    }
  }
});
