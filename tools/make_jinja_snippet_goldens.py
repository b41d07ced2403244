"""Writes tests/goldens/chat_templates/snippets.json: small templates, each pinning one piece of
Jinja2's behaviour that chat templates rely on (whitespace control, scoping, loop variables,
Python's printing of values, filters, tests, string methods, errors), rendered in the environment
transformers renders chat templates in (transformers.utils.chat_template_utils).

Needs transformers and jinja2 (tools/requirements-tools.txt). From the repository root:

  .venv-tools/bin/python tools/make_jinja_snippet_goldens.py
"""
import json
from pathlib import Path

import jinja2
import transformers
from transformers.utils.chat_template_utils import _compile_jinja_template

OUTPUT = Path(__file__).resolve().parent.parent / "tests" / "goldens" / "chat_templates" / "snippets.json"

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi ☕", "name": "ann"},
    {"role": "assistant", "content": "Hello!", "tool_calls": [{"function": {"name": "f", "arguments": {"b": 1, "a": [1.5, None]}}}]},
]

# (name, template, variables)
SNIPPETS = [
    # whitespace control: trim_blocks, lstrip_blocks, - and +, comments, the trailing newline
    ("lstrip_and_trim", "  {% if true %}\n  a\n  {% endif %}\n  b {# c #}\nd\n", {}),
    ("strip_markers", "x  \n  {%- if true -%}  \n y \n {%- endif %}\n z", {}),
    ("plus_markers", "  {%+ if true +%}\nkept\n{% endif %}", {}),
    ("variable_tags_keep_whitespace", "  {{ 'a' }}  \n  {{- 'b' -}}  \n", {}),
    ("comment_lines", "a\n  {#- note -#}\n  b\n{# x #}\nc", {}),
    ("windows_newlines", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n", {}),
    # scoping
    ("loop_scope", "{% set x = 0 %}{% for i in [1, 2, 3] %}{{ x }}{% set x = i %}{{ x }};{% endfor %}|{{ x }}", {}),
    ("namespace", "{% set ns = namespace(n=0, seen=[]) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", {}),
    ("macro_defaults_and_kwargs", "{% macro m(a, b='B', c=none) %}[{{ a }}|{{ b }}|{{ c }}]{% endmacro %}{{ m(1) }}{{ m(1, c=3) }}{{ m('x', 'y') }}", {}),
    ("macro_sees_later_values", "{% set x = 1 %}{% macro show() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ show() }}", {}),
    ("set_block", "{% set body %}  <{{ 'in' }}>  {% endset %}[{{ body }}][{{ body | trim }}]", {}),
    ("set_unpack", "{% set a, b = [1, 'two'] %}{{ b }}{{ a }}", {}),
    # loops
    ("loop_variables", "{% for m in messages %}{{ loop.index }}/{{ loop.length }}{{ loop.first }}{{ loop.last }}{{ loop.revindex0 }}{% if loop.previtem is defined %}<{{ loop.previtem.role }}{% endif %}{% if loop.nextitem is defined %}>{{ loop.nextitem.role }}{% endif %},{% endfor %}", {"messages": MESSAGES}),
    ("loop_filter_else_break", "{% for i in range(10) if i is odd %}{% if i > 6 %}{% break %}{% endif %}{% if i == 3 %}{% continue %}{% endif %}{{ i }}{% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}", {}),
    ("loop_cycle_and_dict_items", "{% for k, v in {'b': 1, 'a': 2}.items() %}{{ loop.cycle('odd', 'even') }}:{{ k }}={{ v }} {% endfor %}", {}),
    ("loop_over_string_and_dict", "{% for c in 'héllo' %}{{ c }}.{% endfor %}{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}", {}),
    # printing values as Python does
    ("print_values", "{{ [1, 'a', none, true, 1.5, {'k': [1]}] }}|{{ (1, 2) }}|{{ (1,) }}|{{ 1e-5 }}|{{ 10 ** 16 * 1.0 }}|{{ 0.1 + 0.2 }}|{{ 100.0 }}|{{ -0.0 }}|{{ 2.5e-3 }}|{{ 123456789012345678 }}", {}),
    ("print_quotes", "{{ ['it\\'s', 'say \"hi\"', 'both \\' \"', 'tab\\tnew\\nline\\\\'] }}", {}),
    ("print_message", "{{ messages[2] }}", {"messages": MESSAGES}),
    ("print_undefined_and_none", "[{{ missing }}][{{ none }}][{{ messages[0].missing }}][{{ 'x' if false }}]", {"messages": MESSAGES}),
    # tojson
    ("tojson_forms", "{{ messages | tojson }}\n{{ messages[2].tool_calls | tojson(indent=2) }}\n{{ {'b': 1, 'a': 'é\"\\n'} | tojson(sort_keys=true) }}\n{{ [1, 2] | tojson(separators=(',', ':')) }}\n{{ {} | tojson }}{{ [] | tojson(indent=4) }}{{ none | tojson }}{{ 'x' | tojson }}", {"messages": MESSAGES}),
    ("tojson_int_keys", "{{ {1: 'a', true: 'b', none: 'c'} | tojson }}{{ {2: 'x'}[2] }}", {}),
    # filters
    ("string_filters", "{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ 'hello world' | title }}|{{ 'hELLO' | capitalize }}|{{ 'Ünï' | upper }}{{ 'ÀB' | lower }}|{{ 'aaa' | replace('a', 'b', 2) }}|{{ 'héllo' | length }}|{{ 42 | string }}{{ none | string }}", {}),
    ("default_filter", "{{ missing | default('d') }}|{{ '' | default('e') }}|{{ '' | default('f', true) }}|{{ none | default('g') }}|{{ missing | d('h') }}", {}),
    ("join_and_list", "{{ ['a', 'b'] | join(', ') }}|{{ messages | join('/', attribute='role') }}|{{ 'abc' | list }}|{{ {'x': 1} | list }}|{{ [3, 1] | first }}{{ [3, 1] | last }}", {"messages": MESSAGES}),
    ("select_and_map", "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }}|{{ messages | rejectattr('tool_calls', 'defined') | list | length }}|{{ [0, 1, '', 'a'] | select | list }}|{{ [1, 2, 3] | reject('odd') | list }}|{{ ['A', 'b'] | map('lower') | join }}|{{ messages | map(attribute='tool_calls.0.function.name', default='-') | list }}", {"messages": MESSAGES}),
    ("sort_unique_dictsort", "{{ [3, 1, 2] | sort }}{{ ['b', 'A', 'c'] | sort(reverse=true) }}{{ ['a', 'A', 'b'] | unique | list }}{{ {'b': 1, 'A': 2} | dictsort }}{{ [{'n': 2}, {'n': 1}] | sort(attribute='n') | map(attribute='n') | list }}{{ [4, 2, 9] | min }}{{ [4, 2, 9] | max }}", {}),
    ("indent_filter", "{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(3, blank=true) }}|{{ 'x\\n' | indent }}", {}),
    ("numbers_filters", "{{ '12' | int }}{{ 'x' | int }}{{ '3.7' | int }}{{ 3.9 | int }}{{ '2.5' | float }}{{ -3 | abs }}{{ 'x' | int(7) }}", {}),
    ("items_filter", "{% for k, v in {'a': 1, 'b': [2]} | items %}{{ k }}{{ v }}{% endfor %}", {}),
    ("safe_markup_escapes_plain_strings", "{{ 'a'|safe + '<b>\"&\\'' }}|{{ '<x>' + 'y'|safe }}|{{ '<x>' ~ 'y'|safe }}|{{ '<i>' | e }}", {}),
    ("filter_block", "{% filter upper %}shout {{ 'this' }}{% endfilter %}", {}),
    # string methods
    ("string_methods", "{{ 'a,b,,c'.split(',') }}{{ ' x  y '.split() }}{{ 'a b c'.split(' ', 1) }}{{ 'a.b.c'.rsplit('.', 1) }}|{{ '<<x>>'.strip('<>') }}{{ '  y'.lstrip() }}{{ 'z  '.rstrip() }}|{{ 'hello'.startswith(('x', 'he')) }}{{ 'hello'.endswith('lo') }}|{{ '{}-{}-{name}'.format(1, 'b', name='c') }}|{{ 'héllo'.find('l') }}{{ 'abc'.find('z') }}|{{ 'a-b'.replace('-', '+') }}{{ 'Ab'.upper() }}{{ 'Ab'.lower() }}|{{ 'x y'.title() }}{{ 'l1\\nl2'.splitlines() }}", {}),
    ("dict_methods", "{{ messages[1].get('name') }}{{ messages[0].get('name') }}{{ messages[0].get('name', 'anon') }}|{{ messages[1].keys() | list }}{{ {'a': 1}.values() | list }}{{ {'a': 1}.items() | list }}", {"messages": MESSAGES}),
    # subscripts and slices
    ("slices", "{{ 'héllo'[1:] }}{{ 'héllo'[-2:] }}{{ [1, 2, 3][::-1] }}{{ [1, 2, 3, 4][1:-1] }}{{ 'abcdef'[::2] }}{{ messages[-1].role }}{{ messages[0]['content'] }}{{ [1, 2][5] }}", {"messages": MESSAGES}),
    # operators
    ("arithmetic", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 / 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 4 / 2 }} {{ 'ab' * 3 }} {{ [1] * 2 }} {{ 1 + 2.0 }} {{ 'a' ~ 1 ~ none }} {{ [1] + [2] }} {{ 10 - 3 * 2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }}", {}),
    ("comparisons_and_logic", "{{ 1 == 1.0 }}{{ 1 == true }}{{ 'a' < 'b' }}{{ [1, 2] < [1, 3] }}{{ 'b' in 'abc' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 'z' not in 'abc' }}|{{ none or 'x' }}{{ 0 and 'y' }}{{ '' or [] }}{{ not none }}|{{ 'y' if 0 else 'n' }}", {}),
    # tests
    ("tests", "{{ 'a' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is sequence }}{{ 1 is number }}{{ true is number }}{{ true is boolean }}{{ 1 is boolean }}{{ none is none }}{{ missing is defined }}{{ missing is undefined }}{{ 4 is divisibleby 2 }}{{ 3 is even }}{{ false is sameas false }}{{ 2 is eq 2 }}{{ 1.5 is float }}{{ 2 is integer }}{{ true is true }}{{ 0 is false }}{{ 'ab' is lower }}{{ range is callable }}{{ none is not none }}", {}),
    # globals
    ("globals", "{{ range(3) | list }}{{ range(1, 7, 2) | list }}{{ range(3, 0, -1) | list }}{{ dict(a=1, b='x') }}{{ namespace(a=1).a }}", {}),
    # what templates refuse, and errors
    ("raise_exception", "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}ok", {"messages": MESSAGES}),
    ("attribute_of_undefined", "line one\n{{ missing.attribute }}", {}),
    ("list_append_is_unsafe", "{% set xs = [] %}{% set _ = xs.append(1) %}{{ xs }}", {}),
    ("unknown_filter_when_run", "{% if false %}{{ x | from_json }}{% endif %}fine{{ 'x' | from_json }}", {}),
    ("string_plus_none", "{{ 'a' + none }}", {}),
    ("namespace_underscore", "{% set ns = namespace() %}{% set ns._x = 1 %}", {}),
    ("range_at_the_sandbox_limit", "{{ range(100000)|length }} {{ range(0, 200000, 2)|length }}", {}),
    ("range_past_the_sandbox_limit", "{{ range(0, 200002, 2)|length }}", {}),
    ("namespace_holding_itself", "{% set ns = namespace(n=0, seen=[]) %}{% set ns.n = ns %}{{ ns }}|{{ ns == ns }}", {}),
    ("list_in_a_namespace_in_the_list", "{% set ns = namespace(a=1) %}{% set ns.l = [ns, 2] %}{{ ns.l }}|{{ ns }}|{{ ns.l == ns.l }}", {}),
    ("dict_in_a_namespace_in_the_dict", "{% set ns = namespace(a=1) %}{% set ns.d = {'x': ns} %}{{ ns.d }}", {}),
    ("runaway_macro_recursion", "{% macro down(n) %}{{ down(n + 1) }}{% endmacro %}{{ down(0) }}", {}),
    ("generator_has_no_length", "{{ [1, 2] | map('string') | length }}", {}),
]


def main():
    snippets = []
    for name, source, variables in SNIPPETS:
        entry = {"name": name, "template": source, "variables": variables}
        try:
            entry["output"] = _compile_jinja_template(source).render(**variables)
        except Exception as exc:  # every failure is recorded: canrun must fail there too
            entry["error_type"] = type(exc).__name__
            entry["error"] = str(exc)
            entry["raised_by_template"] = isinstance(exc, jinja2.exceptions.TemplateError) and type(exc) is jinja2.exceptions.TemplateError
        snippets.append(entry)
    golden = {
        "made_by": "tools/make_jinja_snippet_goldens.py",
        "transformers": transformers.__version__,
        "jinja2": jinja2.__version__,
        "snippets": snippets,
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    failed = sum("error" in s for s in snippets)
    print(f"{OUTPUT}: {len(snippets)} snippets, {failed} of them errors")


if __name__ == "__main__":
    main()
