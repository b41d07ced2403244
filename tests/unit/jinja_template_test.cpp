// The Jinja renderer piece by piece: the snippets of tests/goldens/chat_templates/snippets.json
// (made by tools/make_jinja_snippet_goldens.py with transformers 5.23.0 and jinja2 3.1.6, in the
// environment transformers renders chat templates in) must render to the same text, or fail
// where Jinja2 fails; and the errors name the template's line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "jinja/template.h"
#include "jinja/template_error.h"

namespace canrun::jinja {
namespace {

namespace fs = std::filesystem;
using OrderedJson = nlohmann::ordered_json;

std::tm a_day() {
  std::tm time{};
  time.tm_year = 126;
  time.tm_mon = 0;
  time.tm_mday = 15;
  return time;
}

std::string render(const std::string& source, const OrderedJson& variables = OrderedJson::object()) {
  std::vector<std::pair<std::string, Value>> names;
  for (const auto& [key, value] : variables.items()) names.emplace_back(key, Value::from_json(value));
  return Template(source).render(names, a_day);
}

TEST(JinjaTemplate, SnippetsRenderAsJinja2RendersThem) {
  std::ifstream in(fs::path(CANRUN_SOURCE_DIR) / "tests/goldens/chat_templates/snippets.json");
  std::stringstream text;
  text << in.rdbuf();
  const OrderedJson goldens = OrderedJson::parse(text.str());
  int checked = 0;
  for (const OrderedJson& snippet : goldens.at("snippets")) {
    const std::string name = snippet.at("name").get<std::string>();
    const std::string source = snippet.at("template").get<std::string>();
    SCOPED_TRACE(name);
    if (snippet.contains("output")) {
      try {
        EXPECT_EQ(render(source, snippet.at("variables")), snippet.at("output").get<std::string>());
      } catch (const TemplateError& error) {
        ADD_FAILURE() << "refused: line " << error.line() << ": " << error.what();
      }
    } else {
      try {
        const std::string out = render(source, snippet.at("variables"));
        ADD_FAILURE() << "Jinja2 raises " << snippet.at("error") << ", canrun rendered '" << out << "'";
      } catch (const TemplateError& error) {
        if (snippet.at("raised_by_template").get<bool>()) {
          EXPECT_EQ(error.cause(), TemplateError::Cause::kRaised);
          EXPECT_EQ(std::string(error.what()), snippet.at("error").get<std::string>());
        }
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

// A render error at `line` whose message holds `fragment`.
void expect_refused(const std::string& source, const std::string& fragment, int line = 1) {
  try {
    render(source);
    ADD_FAILURE() << source.substr(0, 200) << ": rendered";
  } catch (const TemplateError& error) {
    EXPECT_EQ(error.cause(), TemplateError::Cause::kRender) << source.substr(0, 200);
    EXPECT_EQ(error.line(), line) << source.substr(0, 200);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << source.substr(0, 200) << ": " << error.what();
  }
}

const std::string kStringBound = "more than the 64 MiB one string may hold";
const std::string kListBound = "more than the 1048576 one list may hold";

// A template ships with a checkpoint: one that would loop or grow without end stops with an
// error at the renderer's bounds (10 million loop iterations, 64 MiB of output, repetitions).
TEST(JinjaTemplate, RunawayTemplatesStopAtTheRenderBounds) {
  expect_refused("{% for a in range(101) %}{% for b in range(100000) if false %}{% endfor %}{% endfor %}",
                 "loops more than 10000000 times");
  expect_refused("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", kStringBound);
  expect_refused("{{ 'ab' * 40000000 }}", "a string of 80000000 bytes, " + kStringBound);
  expect_refused("{{ [1, 2] * 600000 }}", "a list of 1200000 items, " + kListBound);
  expect_refused("{% set ns = namespace(x=[]) %}{% for i in range(600) %}{% set ns.x = [ns.x] %}{% endfor %}",
                 "lists and dicts nest deeper than 500 levels");
  EXPECT_EQ(render("{{ ('ab' * 3) ~ ([0] * 2)|length }}"), "ababab2");
  EXPECT_EQ(render("{{ ('' * 9223372036854775807) ~ ([] * 9223372036854775807)|length }}"), "0");
}

// Every string and list a render makes is bounded before it is made: 64 MiB, 1,048,576 items.
// Doubling a value through a namespace once grew it to gigabytes and ended in std::bad_alloc.
TEST(JinjaTemplate, AValueDoubledInALoopStopsAtTheBoundOnOneValue) {
  const std::string doubling = "{% set ns = namespace(s='x', l=[1]) %}{% for i in range(100) %}\n";
  expect_refused(doubling + "{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "a string of 134217728 bytes, " + kStringBound, 2);
  expect_refused(doubling + "{% set ns.s = ns.s + ns.s %}{% endfor %}", kStringBound, 2);
  expect_refused(doubling + "{% set ns.s = [ns.s, ns.s] | join %}{% endfor %}", kStringBound, 2);
  expect_refused(doubling + "{% set ns.l = ns.l + ns.l %}{% endfor %}", "a list of 2097152 items, " + kListBound, 2);
  expect_refused(doubling + "{% set ns.l = ns.l * 2 %}{% endfor %}", kListBound, 2);
}

// Padding to a huge width, replacing '' in a long string, formatting or printing long strings
// several times: each result's size is known before it is made, and refused past the bound.
TEST(JinjaTemplate, WidthsReplacementsAndFormattingStopAtTheBoundOnOneValue) {
  expect_refused("\n{{ 'a\\nb' | indent(10000000000000) }}", "a string of 10000000000000 bytes, " + kStringBound, 2);
  expect_refused("\n{{ [[1, 2], [3]] | tojson(indent=10000000000000) }}", kStringBound, 2);
  expect_refused("\n{{ 'x' | center(10000000000000) }}", kStringBound, 2);
  // A string of `bytes` x's, made on the first line.
  const auto text_of = [](int bytes) { return "{% set s = 'x' * " + std::to_string(bytes) + " %}\n"; };
  expect_refused(text_of(23 << 20) + "{{ s.replace('', 'yy') }}", "a string of 72351746 bytes, " + kStringBound, 2);
  expect_refused(text_of(33 << 20) + "{{ s }}{{ s }}", kStringBound, 2);
  expect_refused(text_of(33 << 20) + "{{ [s, s] }}", kStringBound, 2);
  expect_refused(text_of(33 << 20) + "{{ '{}{}'.format(s, s) }}", kStringBound, 2);
  expect_refused(text_of(33 << 20) + "{{ ('%s' * 1000) % ((s,) * 1000) }}", kStringBound, 2);
  expect_refused(text_of(1100000) + "{{ (s | list) | length }}", kListBound, 2);
  expect_refused("{% set s = ',' * 1100000 %}\n{{ s.split(',') | length }}", kListBound, 2);
  EXPECT_EQ(render("{{ 'a\n\nb\n' | indent(2) }}|{{ 'a\nb' | indent('> ', true, true) }}|{{ 'ab' | center(6) }}"),
            "a\n\n  b\n|> a\n> b|  ab  ");
}

// All a render makes together is bounded too (512 MiB), so many large values kept in a list, or
// a long string copied again and again, stop well short of gigabytes or minutes. Copying a list of
// strings copies references, as in Python, and counts only the list's own slots.
TEST(JinjaTemplate, ManyLargeValuesStopAtTheRenderBudget) {
  expect_refused("{% set ns = namespace(l=[]) %}\n{% for i in range(1000) %}"
                 "{% set ns.l = ns.l + [('x' * 60000000) ~ i] %}{% endfor %}",
                 "the template builds more than 512 MiB of strings and lists in one render", 2);
  EXPECT_EQ(render("{% set s = 'x' * 1000000 %}{{ ([s] * 1000000) | length }} {{ ([s] * 1000000)[-1] | length }}"),
            "1000000 1000000");
}

// Python's integers have no bound; canrun's are 64-bit. A result past them is a render error
// naming the line, never a wrapped value or a trap (-2**63 // -1 killed the process with SIGFPE),
// and what fits is Python's result.
TEST(JinjaTemplate, IntegersPast64BitsAreAnErrorNotASignal) {
  const std::string min = "(-9223372036854775807 - 1)";
  for (const std::string& source : std::vector<std::string>{
           "{{ " + min + " // -1 }}", "{{ -" + min + " }}", "{{ " + min + " | abs }}", "{{ " + min + " - 1 }}",
           "{{ 9223372036854775807 + 1 }}", "{{ 4294967296 * 4294967296 }}", "{{ 2 ** 63 }}", "{{ 3 ** 9223372036854775807 }}",
           "{{ 1e300 | int }}", "{{ '1e300' | int }}", "{{ '99999999999999999999' | int }}", "{{ '%d' % 1e19 }}"})
    expect_refused("\n" + source, "integer overflow", 2);
  EXPECT_EQ(render("{{ " + min + " % -1 }} {{ " + min + " is divisibleby(-1) }} {{ 7 // -1 }} {{ -7 % -1 }}"),
            "0 True -7 0");
  EXPECT_EQ(render("{{ 1 ** 9223372036854775807 }} {{ (-1) ** 9223372036854775807 }} {{ 2 ** 62 }} {{ (-2) ** 63 }}"),
            "1 -1 4611686018427387904 -9223372036854775808");
  EXPECT_EQ(render("{{ -9223372036854775807 | abs }} {{ 'nan' | float | int(7) }} {{ -2.9 | int }}"),
            "9223372036854775807 7 -2");
  EXPECT_EQ(render("{{ range(-9223372036854775807 - 1, 9223372036854775807, 9223372036854775807) | list }}"),
            "[-9223372036854775808, -1, 9223372036854775806]");
  EXPECT_EQ(render("{{ range(9223372036854775800, 9223372036854775807, 5) | list }} {{ 'abcdef'[1::9223372036854775807] }}"),
            "[9223372036854775800, 9223372036854775805] b");
  try {
    render("{{ range(-9223372036854775807 - 1, 9223372036854775807) | length }}");
    ADD_FAILURE() << "a range of 2**64 - 1 items rendered";
  } catch (const TemplateError& error) {
    EXPECT_NE(std::string(error.what()).find("Range too big"), std::string::npos) << error.what();
  }
}

// Found by fuzz/chat_template_fuzz: a string literal of bytes that are not UTF-8, printed through
// repr(), read past the end of the string. Python never lets such bytes reach Jinja; neither does
// canrun: the template is refused, naming the byte and its line.
TEST(JinjaTemplate, BytesThatAreNotUtf8AreRefused) {
  try {
    render("ok\n{{ ['i\x7f\xff\xff \"hi\xff\"', 'tab\x89\xff'] }}");
    FAIL() << "rendered";
  } catch (const TemplateError& error) {
    EXPECT_EQ(error.cause(), TemplateError::Cause::kSyntax);
    EXPECT_EQ(error.line(), 2);
    EXPECT_EQ(std::string(error.what()), "not UTF-8 text (byte 10)");
  }
  EXPECT_EQ(render("{{ ['caf\xc3\xa9'] }}"), "['caf\xc3\xa9']");
}

TEST(JinjaTemplate, ErrorsNameTheLine) {
  try {
    render("one\ntwo\n{% include 'other.jinja' %}");
    FAIL() << "include is not supported";
  } catch (const TemplateError& error) {
    EXPECT_EQ(error.cause(), TemplateError::Cause::kSyntax);
    EXPECT_EQ(error.line(), 3);
    EXPECT_NE(std::string(error.what()).find("'include'"), std::string::npos) << error.what();
  }
  try {
    render("{% for m in messages %}\n{{ m.content }}\n{{ m.missing.deeper }}\n{% endfor %}",
           {{"messages", {{{"content", "x"}}}}});
    FAIL() << "an attribute of an undefined value is an error";
  } catch (const TemplateError& error) {
    EXPECT_EQ(error.cause(), TemplateError::Cause::kRender);
    EXPECT_EQ(error.line(), 3);
    EXPECT_NE(std::string(error.what()).find("'missing'"), std::string::npos) << error.what();
  }
  for (const char* unterminated : {"{% if true %}open", "{{ 'a' ", "{# never closed", "{{ 'text }}"}) {
    EXPECT_THROW(render(unterminated), TemplateError) << unterminated;
  }
}

std::string repeated(const std::string& piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

TEST(JinjaTemplate, HostileNestingIsAnErrorNotACrash) {
  constexpr int kDeep = 40000;  // the longest source, 24 bytes a level, within kMaxTemplateBytes
  for (const std::string& source :
       {"{{ " + repeated("(", kDeep) + "1" + repeated(")", kDeep) + " }}",
        "{{ " + repeated("[", kDeep) + "1" + repeated("]", kDeep) + " }}", "{{ 1" + repeated(" + 1", kDeep) + " }}",
        repeated("{% if true %}", kDeep) + "x" + repeated("{% endif %}", kDeep), "{{ " + repeated("not ", kDeep) + "1 }}",
        "{{ " + repeated("-", kDeep) + "1 }}", "{{ 'x'" + repeated("|trim", kDeep) + " }}"}) {
    try {
      render(source);
      ADD_FAILURE() << "rendered a template nested " << kDeep << " deep: " << source.substr(0, 40);
    } catch (const TemplateError& error) {
      EXPECT_EQ(error.cause(), TemplateError::Cause::kSyntax) << error.what();
      EXPECT_NE(std::string(error.what()).find("nests deeper"), std::string::npos) << error.what();
    }
  }
  // What real templates nest is well within the bound.
  EXPECT_EQ(render("{{ " + repeated("(", 30) + "1" + repeated(")", 30) + " }}"), "1");
  EXPECT_EQ(render("{{ 0" + repeated(" + 1", 200) + " }}"), "200");
  EXPECT_EQ(render(repeated("{% if true %}", 30) + "x" + repeated("{% endif %}", 30)), "x");
}

TEST(JinjaTemplate, StrftimeNowFormatsTheGivenTime) {
  EXPECT_EQ(render("{{ strftime_now('%d %b %Y') }}"), "15 Jan 2026");
}

}  // namespace
}  // namespace canrun::jinja
