/**
 * The sandbox renders a message's Markdown as the server does for the structures bots send most:
 * lists (without a blank line before them), headings, tables, emoji by name, strikethrough. Read
 * back over HTTP (GET /messages/{id}, whose `apply_markdown` defaults to true).
 */
import { describe } from "vitest";
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, test } from "../support/sandbox/fixture.ts";

async function rendered(
  sb: { as(email: string): { post: Function; get: Function } },
  content: string,
): Promise<string> {
  const bot = sb.as(BOT);
  const sent = await bot.post("/messages", { type: "stream", to: "general", topic: "md", content });
  expect(sent.status, sent.text).toBe(200);
  const read = await bot.get(`/messages/${sent.body.id}`);
  expect(read.status, read.text).toBe(200);
  expect(read.body.raw_content).toBe(content);
  return read.body.message.content as string;
}

test("a bulleted list after a line of text, with an item nested under another", async ({ sb }) => {
  // Any of -, * and + goes on with the list, as in the server's Markdown.
  expect(await rendered(sb, "Today:\n- **alice**: done\n- bob\n  - reviews\n* carol")).toBe(
    "<p>Today:</p>\n<ul>\n<li><strong>alice</strong>: done</li>\n<li>bob<ul>\n<li>reviews</li>\n</ul>\n</li>\n<li>carol</li>\n</ul>",
  );
  // A line after an item, not indented, goes on with its text.
  expect(await rendered(sb, "- first\nwraps here")).toBe("<ul>\n<li>first<br>\nwraps here</li>\n</ul>");
});

test("a blank line between items makes one loose list, its items' text in paragraphs", async ({ sb }) => {
  // The item after a line that is not an item starts a new block too, so it is loose as well.
  expect(
    await rendered(
      sb,
      "Release steps:\n\n1. tag the build\n\n2. run the checks\n   on every platform\n3. publish",
    ),
  ).toBe(
    "<p>Release steps:</p>\n<ol>\n<li>\n<p>tag the build</p>\n</li>\n<li>\n<p>run the checks<br>\n   on every platform</p>\n</li>\n<li>\n<p>publish</p>\n</li>\n</ol>",
  );
  // A block indented under an item after a blank line is another paragraph of that item.
  expect(await rendered(sb, "- deploy\n\n  notes follow\n- verify")).toBe(
    "<ul>\n<li>\n<p>deploy</p>\n<p>notes follow</p>\n</li>\n<li>\n<p>verify</p>\n</li>\n</ul>",
  );
});

test("a rule of -, * or _ right after an item ends the list, even spaced like an item", async ({ sb }) => {
  expect(await rendered(sb, "- fetch\n- - -\n* report\n***\n- again\n___")).toBe(
    "<ul>\n<li>fetch</li>\n</ul>\n<hr>\n<ul>\n<li>report</li>\n</ul>\n<hr>\n<ul>\n<li>again</li>\n</ul>\n<hr>",
  );
});

test("a numbered list keeps its first number", async ({ sb }) => {
  expect(await rendered(sb, "1. one\n2. two")).toBe("<ol>\n<li>one</li>\n<li>two</li>\n</ol>");
  expect(await rendered(sb, "3. three\n4. four")).toBe(
    '<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>',
  );
});

test("headings need their space; #channel is text", async ({ sb }) => {
  expect(await rendered(sb, "## Standup\nnotes")).toBe("<h2>Standup</h2>\n<p>notes</p>");
  expect(await rendered(sb, "#hashtag")).toBe("<p>#hashtag</p>");
});

test("a table with its columns' alignment, cells rendered inline", async ({ sb }) => {
  expect(await rendered(sb, "| who | hours |\n| :-- | --: |\n| `ann` | 3 |\n| bo \\| b | 4 |")).toBe(
    [
      "<table>",
      "<thead>",
      "<tr>",
      '<th style="text-align: left;">who</th>',
      '<th style="text-align: right;">hours</th>',
      "</tr>",
      "</thead>",
      "<tbody>",
      "<tr>",
      '<td style="text-align: left;"><code>ann</code></td>',
      '<td style="text-align: right;">3</td>',
      "</tr>",
      "<tr>",
      // The server has no backslash escapes: `\|` keeps a cell whole and stays as written.
      '<td style="text-align: left;">bo \\| b</td>',
      '<td style="text-align: right;">4</td>',
      "</tr>",
      "</tbody>",
      "</table>",
    ].join("\n"),
  );
});

test("emoji by name, never inside code or a bare address; strikethrough", async ({ sb }) => {
  expect(await rendered(sb, "ship it :thumbs_up: ~~later~~ :not_an_emoji: `:tada:`")).toBe(
    '<p>ship it <span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span> <del>later</del> :not_an_emoji: <code>:tada:</code></p>',
  );
  expect(await rendered(sb, "see https://example.org/:tada:/x")).toBe(
    '<p>see <a href="https://example.org/:tada:/x">https://example.org/:tada:/x</a></p>',
  );
});

test("channel, topic and message links, with the server's classes and narrow addresses", async ({ sb }) => {
  const general = (await sb.as(BOT).get("/get_stream_id", { stream: "general" })).body.stream_id as number;
  const channel = `/#narrow/channel/${general}-general`;
  expect(await rendered(sb, "Posted to #**general>standup 2026-12-07**.")).toBe(
    `<p>Posted to <a class="stream-topic" data-stream-id="${general}" href="${channel}/topic/standup.202026-12-07">#general &gt; standup 2026-12-07</a>.</p>`,
  );
  expect(await rendered(sb, "at #**general>md@12** in #**general**, not #**nowhere>x**")).toBe(
    `<p>at <a class="message-link" href="${channel}/topic/md/near/12">#general &gt; md @ 💬</a> in <a class="stream" data-stream-id="${general}" href="${channel}">#general</a>, not #<strong>nowhere&gt;x</strong></p>`,
  );
});

test("bold holds italic; a bare address ends before the punctuation after it", async ({ sb }) => {
  expect(await rendered(sb, "**bold *and italic* too** ***both***")).toBe(
    "<p><strong>bold <em>and italic</em> too</strong> <strong><em>both</em></strong></p>",
  );
  expect(await rendered(sb, "See https://example.org/a_(b). Or (https://example.org/x)!")).toBe(
    '<p>See <a href="https://example.org/a_(b)">https://example.org/a_(b)</a>. Or (<a href="https://example.org/x">https://example.org/x</a>)!</p>',
  );
});

test("<time:…> names its instant in UTC, as the server writes it; an unknown one is an error", async ({
  sb,
}) => {
  expect(await rendered(sb, "at <time:2026-12-07T13:00:00+01:00> or <time:1496701800>")).toBe(
    '<p>at <time datetime="2026-12-07T12:00:00Z">2026-12-07T13:00:00+01:00</time> or <time datetime="2017-06-05T22:30:00Z">1496701800</time></p>',
  );
  expect(await rendered(sb, "<time:soon>")).toBe(
    '<p><span class="timestamp-error">Invalid time format: soon</span></p>',
  );
});

describe("<time:…> in words, on a still clock (Monday 2026-12-07, 15:00 UTC)", () => {
  test.override({ sandboxOptions: { clock: { now: () => Date.UTC(2026, 11, 7, 15) } } });

  test("month names, ordinal days, 12-hour times and zones are read as the server's parser does", async ({
    sb,
  }) => {
    const at = async (written: string) =>
      /datetime="([^"]+)"|timestamp-error/.exec(await rendered(sb, `<time:${written}>`))![1] ?? "error";
    expect(await at("Tuesday, March 3rd 2026 at 4:15pm CET")).toBe("2026-03-03T15:15:00Z");
    expect(await at("12 Nov 2026 9am")).toBe("2026-11-12T09:00:00Z");
    expect(await at("1496701800.25")).toBe("2017-06-05T22:30:00.250000Z");
    // Parts left out come from the sandbox's date; a weekday alone is the next such day.
    expect(await at("16:45 PST")).toBe("2026-12-08T00:45:00Z");
    expect(await at("Friday 10:00")).toBe("2026-12-11T10:00:00Z");
    // What the server refuses stays an error: words it does not know, a day the month lacks.
    expect(await at("next tuesday")).toBe("error");
    expect(await at("Feb 30 2026")).toBe("error");
    expect(await rendered(sb, "<time:<b>>")).toBe(
      '<p><span class="timestamp-error">Invalid time format: &lt;b</span>&gt;</p>',
    );
  });
});

test("a message starting with '/me ' is a status message, on several lines too; '/me' alone is not", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const queue = await openQueue(bot, { event_types: ["update_message"] });
  const meMessage = async (content: string) => {
    const sent = await bot.post("/messages", { type: "stream", to: "general", topic: "md", content });
    return (await bot.get(`/messages/${sent.body.id}`)).body.message.is_me_message as boolean;
  };
  expect(await meMessage("/me waves\nand leaves")).toBe(true);
  expect(await meMessage("/me")).toBe(false);
  const sent = await bot.post("/messages", {
    type: "stream",
    to: "general",
    topic: "md",
    content: "/me naps",
  });
  expect((await bot.patch(`/messages/${sent.body.id}`, { content: "/me" })).status).toBe(200);
  expect((await queue.peek()).map((e) => e.is_me_message)).toEqual([false]);
});

test("a code block names its language as the server's highlighter does, or as written", async ({ sb }) => {
  expect(await rendered(sb, "```py\nx = 1\n```\n~~~ inventedlanguage\n<b>\n~~~")).toBe(
    [
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code>x = 1',
      "</code></pre></div>",
      '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>&lt;b&gt;',
      "</code></pre></div>",
    ].join("\n"),
  );
});

test("a character reference written out stays one, outside code", async ({ sb }) => {
  expect(await rendered(sb, "a & b &amp; c &#42; &gt; `&amp;`")).toBe(
    "<p>a &amp; b &amp; c &#42; &gt; <code>&amp;amp;</code></p>",
  );
});

test("a line of three or more -, _ or * is a horizontal rule, even right after text", async ({ sb }) => {
  expect(await rendered(sb, "Standup\n---\n* * *\n- one")).toBe(
    "<p>Standup</p>\n<hr>\n<hr>\n<ul>\n<li>one</li>\n</ul>",
  );
});

test("text keeps its quotes; code spans take runs of backticks; a link without text shows its address", async ({
  sb,
}) => {
  expect(await rendered(sb, 'it\'s "done": see [](https://example.org/a) and ``a `tick` b``')).toBe(
    '<p>it\'s "done": see <a href="https://example.org/a">https://example.org/a</a> and <code>a `tick` b</code></p>',
  );
  // Three backticks around text on one line are inline code, not a code block.
  expect(await rendered(sb, "```npm ci```")).toBe("<p><code>npm ci</code></p>");
});

test("emphasis as the server's patterns find it; an emoji name right after a word", async ({ sb }) => {
  expect(await rendered(sb, "const char *p = (char *)q;\nx*y*z")).toBe(
    "<p>const char *p = (char *)q;<br>\nx<em>y</em>z</p>",
  );
  expect(await rendered(sb, "~~~not~~~ ~~yes~~ done:tada:")).toBe(
    '<p>~~~not~~~ <del>yes</del> done<span aria-label="tada" class="emoji emoji-1f389" role="img" title="tada">:tada:</span></p>',
  );
  // A time's text is kept as written, even when it would be bold.
  expect(await rendered(sb, "<time:**later**>")).toBe(
    '<p><span class="timestamp-error">Invalid time format: **later**</span></p>',
  );
});

test("code blocks: quotes as the highlighter writes them, trailing spaces cut, four-space indents", async ({
  sb,
}) => {
  expect(await rendered(sb, "```\nprint('hi') \t\n```")).toBe(
    '<div class="codehilite"><pre><span></span><code>print(&#39;hi&#39;)\n</code></pre></div>',
  );
  expect(await rendered(sb, "Run:\n\n    npm test\n\n    npm run build\n\nthen")).toBe(
    '<p>Run:</p>\n<div class="codehilite"><pre><span></span><code>npm test\n\nnpm run build\n</code></pre></div>\n<p>then</p>',
  );
  expect(await rendered(sb, "```spoiler\nhidden\n```")).toBe(
    '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>hidden</p>\n</div></div>',
  );
});

test("a quote runs to the blank line after it, lines without '>' too; mentions in it are silent", async ({
  sb,
}) => {
  const html = await rendered(sb, ">@**Mel Member** wrote\nthe plan\n\nagreed @**Mel Member**");
  const id = /data-user-id="(\d+)"/.exec(html)![1];
  expect(html).toBe(
    `<blockquote>\n<p><span class="user-mention silent" data-user-id="${id}">Mel Member</span> wrote<br>\nthe plan</p>\n</blockquote>\n<p>agreed <span class="user-mention" data-user-id="${id}">@Mel Member</span></p>`,
  );
});

test("emoji characters are shown by their names, as the server shows them", async ({ sb }) => {
  const span = (name: string, code: string) =>
    `<span aria-label="${name.replaceAll("_", " ")}" class="emoji emoji-${code}" role="img" title="${name.replaceAll("_", " ")}">:${name}:</span>`;
  // U+FE0F is left out of the code; a sequence joined by U+200D is one emoji.
  expect(await rendered(sb, "✅ build, ⚠️ lint 🤷‍♀️")).toBe(
    `<p>${span("check", "2705")} build, ${span("warning", "26a0")} lint ${span("woman_shrugging", "1f937-200d-2640")}</p>`,
  );
  // A character shown as text unless U+FE0F follows it stays text, as do digits; so does a
  // sequence the server does not know, even made of emoji it knows.
  expect(await rendered(sb, "⚠ 3 © #️⃣ 🍋‍🟪")).toBe(`<p>⚠ 3 © ${span("hash", "0023-20e3")} 🍋‍🟪</p>`);
  // Every name of an emoji is known, the server's canonical one shown for a character.
  expect(await rendered(sb, ":gold: 🙏 :pray:")).toBe(
    `<p>${span("gold", "1f947")} ${span("folded_hands", "1f64f")} ${span("pray", "1f64f")}</p>`,
  );
});

test("a table or a list with more than one digit starts a block, as in the server's block parser", async ({
  sb,
}) => {
  const table = "| host | status |\n| --- | --- |\n| db1 | up |";
  // Right after a line of text, the rows go on with the paragraph.
  expect(await rendered(sb, `Status:\n${table}`)).toBe(
    "<p>Status:<br>\n| host | status |<br>\n| --- | --- |<br>\n| db1 | up |</p>",
  );
  // After a heading (or a blank line) it is a table; without rows it has one empty row.
  expect(await rendered(sb, "## Status\n| host | status |\n| --- | --- |")).toBe(
    "<h2>Status</h2>\n<table>\n<thead>\n<tr>\n<th>host</th>\n<th>status</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td></td>\n<td></td>\n</tr>\n</tbody>\n</table>",
  );
  // A delimiter row needs as many cells as the header.
  expect(await rendered(sb, "| host | status |\n| --- |")).toBe("<p>| host | status |<br>\n| --- |</p>");
  // An item numbered 10 or more after a line of text goes on with it.
  expect(await rendered(sb, "Top scores:\n10. ann\n11. bo")).toBe(
    "<p>Top scores:<br>\n10. ann<br>\n11. bo</p>",
  );
});

test("a quote ends at a heading or a rule right after it", async ({ sb }) => {
  expect(await rendered(sb, "> deploy done\n---\n# Next")).toBe(
    "<blockquote>\n<p>deploy done</p>\n</blockquote>\n<hr>\n<h1>Next</h1>",
  );
});

test("a code block's language is named as the server's highlighter names its lexer", async ({ sb }) => {
  const named = async (lang: string) =>
    /data-code-language="([^"]*)"/.exec(await rendered(sb, `\`\`\`${lang}\nx\n\`\`\``))?.[1];
  expect(await named("py2")).toBe("Python 2.x");
  expect(await named("Console")).toBe("Bash Session");
  expect(await named("text")).toBe("Text only");
  expect(await named("toml")).toBe("TOML");
  // Pygments has no lexer called yml (only a file pattern), so the server keeps it as written.
  expect(await named("yml")).toBe("yml");
});

test("a link into the realm's narrows or uploads becomes relative, as the server writes it", async ({
  sb,
}) => {
  const realm = sb.sandbox.url;
  expect(
    await rendered(sb, `[the thread](${realm}/#narrow/channel/1-general) ${realm}/user_uploads/1/ab/log.txt`),
  ).toBe(
    `<p><a href="#narrow/channel/1-general">the thread</a> <a href="user_uploads/1/ab/log.txt">${realm}/user_uploads/1/ab/log.txt</a></p>`,
  );
  // Other addresses in the realm, and other hosts, are kept whole.
  expect(await rendered(sb, `${realm}/help and https://example.org/#narrow`)).toBe(
    `<p><a href="${realm}/help">${realm}/help</a> and <a href="https://example.org/#narrow">https://example.org/#narrow</a></p>`,
  );
});

test("bare domain names and emails are linked, and links of a scheme the server refuses stay text", async ({
  sb,
}) => {
  expect(await rendered(sb, "Deployed to staging.example.com, mail ops@example.com; readme.md stays")).toBe(
    '<p>Deployed to <a href="http://staging.example.com">staging.example.com</a>, mail <a href="mailto:ops@example.com">ops@example.com</a>; readme.md stays</p>',
  );
  expect(await rendered(sb, "[run](javascript:alert(1)) [app](slack://open) [](example.com)")).toBe(
    '<p>[run](javascript:alert(1)) [app](slack://open) <a href="http://example.com">http://example.com</a></p>',
  );
  // Parentheses nested in an address stay in it.
  expect(await rendered(sb, "(see https://en.wikipedia.org/wiki/A_(b_(c)))")).toBe(
    '<p>(see <a href="https://en.wikipedia.org/wiki/A_(b_(c))">https://en.wikipedia.org/wiki/A_(b_(c))</a>)</p>',
  );
});

test("emoticons become emoji only for a sender who turned translate_emoticons on (off by default)", async ({
  sb,
}) => {
  const c = sb.sandbox.control;
  const fan = c.createUser({
    email: "fan@sandbox.example",
    full_name: "Fan",
    settings: { translate_emoticons: true },
  });
  const smile = '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>';
  const heart = '<span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:</span>';
  const sent = await sb
    .as(fan.email)
    .post("/messages", { type: "private", to: BOT, content: "done :) <3 a:) `:)`" });
  expect(sent.status, sent.text).toBe(200);
  const html = async (id: number) => (await sb.as(BOT).get(`/messages/${id}`)).body.message.content as string;
  expect(await html(sent.body.id)).toBe(`<p>done ${smile} ${heart} a:) <code>:)</code></p>`);
  // An edit is rendered with the sender's setting too.
  expect((await sb.as(fan.email).patch(`/messages/${sent.body.id}`, { content: "ok :)" })).status).toBe(200);
  expect(await html(sent.body.id)).toBe(`<p>ok ${smile}</p>`);
  expect(await rendered(sb, "ok :)")).toBe("<p>ok :)</p>");
  const settings = (await sb.as(BOT).register({ fetch_event_types: ["user_settings"] })).user_settings;
  expect(settings.translate_emoticons).toBe(false);
});

test("a fenced quote holds a fenced code block of the same fence; blank lines around code are dropped", async ({
  sb,
}) => {
  // The code block's closing fence closes the code block, not the quote.
  expect(await rendered(sb, "```quote\nYou wrote:\n```py\n\nprint(1)\n\n```\n```\nThanks")).toBe(
    '<blockquote>\n<p>You wrote:</p>\n<div class="codehilite" data-code-language="Python"><pre><span></span><code>print(1)\n</code></pre></div>\n</blockquote>\n<p>Thanks</p>',
  );
  // A block without a line shows nothing; the language is matched without regard to case.
  expect(await rendered(sb, "```\n```\n~~~Quote\nhi\n~~~")).toBe("<blockquote>\n<p>hi</p>\n</blockquote>");
});

test("emoji in a link's text are shown as emoji; an address is kept as written", async ({ sb }) => {
  expect(await rendered(sb, "[✅ build 12 :tada:](https://ci.example.com/12)")).toBe(
    '<p><a href="https://ci.example.com/12"><span aria-label="check" class="emoji emoji-2705" role="img" title="check">:check:</span> build 12 <span aria-label="tada" class="emoji emoji-1f389" role="img" title="tada">:tada:</span></a></p>',
  );
});
