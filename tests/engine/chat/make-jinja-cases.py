#!/usr/bin/env python3
"""Regenerates jinja-cases.inc: small templates rendered by the reference engine, Python Jinja2
(3.1.x) configured as Hugging Face transformers configures it for chat templates. The C++ test
replays each case through our interpreter and expects the same bytes (or an error where Jinja2
raised one). Run: python3 make-jinja-cases.py > jinja-cases.inc"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def strftime_now(fmt):
    return datetime(2024, 7, 26, 12, 0).strftime(fmt)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now

# (name, template, context)
CASES = [
    # whitespace control
    ("trim_blocks", "{% if true %}\nyes\n{% endif %}\nafter", {}),
    ("lstrip_blocks", "a\n    {% if true %}\n    b\n    {% endif %}\nc", {}),
    ("strip_signs", "a   {%- if true -%}   b   {%- endif -%}   c", {}),
    ("var_strip", "a \n {{- 'x' -}} \n b", {}),
    ("plus_keeps", "a\n    {%+ if true %}x{% endif +%}\nb", {}),
    ("comment_trim", "a\n  {# note #}\nb {#- tight -#} c", {}),
    ("raw_block", "{% raw %}{{ not evaluated }}{% endraw %}", {}),
    ("trailing_newline", "line\n", {}),
    ("crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n", {}),
    ("lstrip_not_vars", "x\n    {{ 'v' }}\n", {}),
    # printing and Python conversions
    ("py_str", "{{ true }} {{ false }} {{ none }} {{ 1.0 }} {{ 1e20 }} {{ 0.1 + 0.2 }} {{ 1.5e-7 }} {{ 10 / 4 }}", {}),
    ("py_repr", "{{ [1, 'a', \"it's\", none, true, 2.5, {'k': [1]}] }} {{ (1,) }} {{ (1, 2) }}", {}),
    ("repr_escapes", "{{ ['a\\nb', 'tab\\t', 'q\"\\'', 'é', '\\x01'] }}", {}),
    ("undefined_prints_empty", "[{{ missing }}][{{ d.missing }}][{{ d['missing'] }}][{{ none.x }}]", {"d": {}}),
    ("string_escapes", "{{ '\\u00e9\\x41\\n\\\\' }}|{{ \"a\" 'b' }}", {}),
    # expressions
    ("arith", "{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}", {}),
    ("concat_tilde", "{{ 'a' ~ 1 ~ none ~ true ~ missing }}", {}),
    ("string_mult", "{{ '-' * 3 }}{{ 2 * 'ab' }}{{ [0] * 2 }}", {}),
    ("compare_chain", "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ true == 1 }}", {}),
    ("in_not_in", "{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ 1 in missing }}", {}),
    ("and_or_values", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ none or [] }} {{ not 0 }}", {}),
    ("ternary", "{{ 'y' if true else 'n' }}{{ 'y' if false else 'n' }}[{{ 'y' if false }}]", {}),
    ("precedence", "{{ 1 + 2 * 3 }} {{ -2 ** 2 }} {{ not true == false }} {{ 'a' ~ (1 + 2) }} {{ [1,2,3]|length - 1 }} {{ 2 * 3 ~ 4 }}", {}),
    ("slicing", "{{ 'héllo'[1:3] }} {{ 'abc'[::-1] }} {{ [1,2,3,4][1:] }} {{ [1,2,3,4][-2:] }} {{ [1,2,3][::2] }} {{ 'abc'[-1] }}", {}),
    ("subscript_attr", "{{ d.a }} {{ d['a'] }} {{ l[0] }} {{ l.0 }} {{ d.items is defined }} {{ d['items'] is defined }}", {"d": {"a": 1}, "l": [5]}),
    ("dict_literal_order", "{{ {'b': 1, 'a': 2} }} {{ {'b': 1, 'a': 2}|tojson }}", {}),
    # control flow
    ("if_elif_else", "{% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %} {% endfor %}", {}),
    ("loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }}|{% endfor %}", {}),
    ("loop_prev_next", "{% for x in [1, 2, 3] %}({{ loop.previtem }},{{ loop.nextitem }}){{ loop.cycle('a', 'b') }}{% endfor %}", {}),
    ("loop_else", "{% for x in [] %}x{% else %}empty{% endfor %}{% for x in missing %}x{% else %}undef{% endfor %}", {}),
    ("loop_filter", "{% for x in range(10) if x is odd %}{{ x }}{{ '.' if not loop.last }}{% endfor %} {{ loop }}", {}),
    ("loop_unpack", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for a, b in [[1, 2], (3, 4)] %}{{ a + b }}{% endfor %}", {"d": {"z": 1, "a": 2}}),
    ("loop_dict_keys", "{% for k in d %}{{ k }}{% endfor %}", {"d": {"z": 1, "a": 2}}),
    ("break_continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("nested_loops", "{% for a in [1, 2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }} {% endfor %}{{ loop.index }};{% endfor %}", {}),
    # assignment and scope
    ("set_scope", "{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = i * 10 %}{{ x }} {% endfor %}{{ x }}", {}),
    ("set_in_if", "{% if true %}{% set y = 'set' %}{% endif %}{{ y }}", {}),
    ("namespace", "{% set ns = namespace(n=0, s='') %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", {}),
    ("block_set", "{% set body %}\n  Hello {{ name }}  \n{% endset %}[{{ body }}]{% set t | trim | upper %} x {% endset %}[{{ t }}]", {"name": "Bob"}),
    ("tuple_set", "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = 1, 2 %}{{ c }}", {}),
    ("context_override", "{% set messages = messages[1:] %}{{ messages|length }}", {"messages": [1, 2, 3]}),
    # macros
    ("macro_defaults", "{% macro m(a, b='B', c=none) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }}|{{ m(1, 2) }}|{{ m(1, c=3) }}|{{ m() }}", {}),
    ("macro_varargs", "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k='v') }}", {}),
    ("macro_globals", "{% macro m() %}{{ g }}{% endmacro %}{% set g = 'late' %}{{ m() }}", {}),
    ("macro_recursion", "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}", {}),
    ("call_block", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}inner{% endcall %}", {}),
    ("call_block_args", "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) each([1, 2]) %}[{{ v }}]{% endcall %}", {}),
    ("filter_block", "{% filter upper %}shout {{ 'it' }}{% endfilter %}", {}),
    # filters
    ("f_strings", "{{ ' a b '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ 'abc'|upper }}|{{ 'ABC'|lower }}|{{ 'hello world'|title }}|{{ 'hELLO'|capitalize }}|{{ 'a-b(c d'|title }}", {}),
    ("f_default", "{{ missing|default('d') }}{{ none|default('d') }}{{ ''|default('d', true) }}{{ 0|d('z', boolean=true) }}", {}),
    ("f_length", "{{ 'héllo'|length }} {{ [1, 2]|length }} {{ {'a': 1}|count }} {{ missing|length }}", {}),
    ("f_join", "{{ [1, 'a', none]|join(', ') }}|{{ [{'n': 'x'}, {'n': 'y'}]|join('-', attribute='n') }}|{{ 'abc'|join('.') }}", {}),
    ("f_first_last", "{{ [1, 2, 3]|first }}{{ [1, 2, 3]|last }}{{ 'xyz'|first }}{{ 'xyz'|last }}[{{ []|first }}]", {}),
    ("f_list_string", "{{ 'ab'|list }} {{ (1, 2)|list }} {{ {'k': 1}|list }} {{ 5|string ~ 'x' }}", {}),
    ("f_items_dictsort", "{{ d|items|list }} {{ d|dictsort }} {{ d|dictsort(by='value', reverse=true) }}", {"d": {"b": 2, "A": 3, "c": 1}}),
    ("f_select", "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('even')|list }} {{ [0, 1, '', 'a']|select|list }}", {}),
    ("f_selectattr", "{{ xs|selectattr('t', 'equalto', 'a')|map(attribute='v')|list }} {{ xs|rejectattr('t', 'eq', 'a')|list }} {{ xs|selectattr('v')|list|length }}", {"xs": [{"t": "a", "v": 1}, {"t": "b", "v": 0}, {"t": "a", "v": 3}]}),
    ("f_map", "{{ ['a', 'b']|map('upper')|list }} {{ xs|map(attribute='n.m', default='?')|list }} {{ none|map('upper')|list }}", {"xs": [{"n": {"m": 1}}, {"n": {}}]}),
    ("f_sort_unique", "{{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ [3, 1, 2]|sort(reverse=true) }} {{ xs|sort(attribute='k')|map(attribute='k')|list }} {{ ['a', 'A', 'b', 'a']|unique|list }}", {"xs": [{"k": 2}, {"k": 1}]}),
    ("f_min_max_sum", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ [1, 2, 3]|sum }} {{ xs|sum(attribute='v') }} {{ ['B', 'a']|max }}", {"xs": [{"v": 2}, {"v": 5}]}),
    ("f_replace_indent", "{{ 'aaa'|replace('a', 'b', 2) }}|{{ 'l1\\nl2\\n\\nl3'|indent(2) }}|{{ 'l1\\nl2'|indent(2, first=true) }}|{{ 'x\\n\\ny'|indent('> ', blank=true) }}", {}),
    ("f_numbers", "{{ '42'|int }} {{ '4.7'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ '2.5'|float }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ -3|abs }} {{ 2.4|round(0, 'ceil') }}", {}),
    ("f_safe_markup", "{{ ('<b>'|safe + '<i>') }} {{ '<x>'|e }} {{ ('a'|safe ~ '<') }} {{ ('<'|safe).upper() }}", {}),
    ("f_misc", "{{ 'hello world foo'|wordcount }} {{ 'abc'|center(7) }}| {{ 'abc'|reverse }} {{ [1, 2]|reverse|list }} {{ {'a': [1]}|pprint }} {{ '%s=%d'|format('x', 3) }}", {}),
    # tojson
    ("tojson_basic", "{{ v|tojson }}", {"v": {"b": [1, 2.5, True, None], "a": "é\"\n", "c": {}}}),
    ("tojson_indent", "{{ v|tojson(indent=2) }}|{{ v|tojson(indent=0) }}|{{ []|tojson(indent=2) }}", {"v": {"b": [1, {"x": []}], "a": "s"}}),
    ("tojson_options", "{{ v|tojson(ensure_ascii=true) }} {{ v|tojson(separators=(',', ':')) }} {{ v|tojson(sort_keys=true) }}", {"v": {"z": "日本🎉", "a": [1, 2]}}),
    ("tojson_scalars", "{{ 1|tojson }} {{ 1.0|tojson }} {{ 'x'|tojson }} {{ none|tojson }} {{ (1, 2)|tojson }} {{ {1: 'a', none: 'b'}|tojson }}", {}),
    # tests
    ("tests_types", "{{ 'a' is string }}{{ 1 is number }}{{ true is number }}{{ 1 is integer }}{{ true is integer }}{{ 1.0 is float }}{{ {} is mapping }}{{ [] is sequence }}{{ 'a' is iterable }}{{ missing is iterable }}{{ none is none }}{{ true is boolean }}", {}),
    ("tests_values", "{{ missing is defined }}{{ missing is undefined }}{{ d.k is defined }}{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 2 is eq 2 }}{{ 2 is equalto(3) }}{{ 'a' is in 'abc' }}{{ true is true }}{{ 1 is true }}{{ 0 is false }}{{ none is sameas none }}{{ 'ABC' is upper }}{{ 'abc' is lower }}{{ 3 is gt 2 }}{{ 3 is lessthan 2 }}", {"d": {}}),
    ("tests_not", "{{ x is not none }}{{ x is not defined }}{{ not x is defined }}", {"x": None}),
    # methods
    ("str_methods", "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a b c'.rsplit(' ', 1) }} {{ '  x '.strip() }}|{{ 'xxhixx'.lstrip('x') }}|{{ 'xxhixx'.rstrip('x') }}", {}),
    ("str_methods2", "{{ 'abc'.startswith('a') }}{{ 'abc'.endswith(('x', 'c')) }}{{ 'hello'.replace('l', 'L') }}{{ 'héllo'.find('l') }}{{ 'a-b'.upper() }}{{ 'Hello World'.lower() }}{{ 'hello world'.title() }}{{ 'x'.join(['1', '2']) }}{{ 'aaa'.count('a') }}", {}),
    ("str_format", "{{ 'x{}y{}'.format(1, 'z') }} {{ '{0}-{0}'.format('r') }} {{ '{a}!'.format(a=5) }} {{ '{{}}'.format() }} {{ '<{:>5}|{:<4}|{:^6}>'.format('ab', 'c', 'mid') }}", {}),
    ("str_percent", "{{ '%s and %s' % ('a', 1) }} {{ '%05.2f' % 3.14159 }} {{ '%d%%' % 50 }} {{ '%-4s|' % 'ab' }}", {}),
    ("dict_methods", "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 'dflt') }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}", {"d": {"a": 1, "b": [2]}}),
    ("list_methods", "{{ l.index(3) }} {{ l.count(1) }} {{ [1, 2] + [3] }} {{ (l|length) }}", {"l": [1, 3, 1]}),
    ("whitespace_mix", "<ul>\n{% for m in ms %}\n  {# a comment #}\n  <li>{{ m }}</li>\n{% endfor %}\n</ul>\n", {"ms": ["a", "b"]}),
    ("nested_data", "{% for m in messages %}{{ m.role }}:{{ m['content'] }}{% if m.tool_calls is defined %}{% for c in m.tool_calls %}[{{ c.function.name }}({{ c.function.arguments|tojson }})]{% endfor %}{% endif %};{% endfor %}", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]}]}),
    # unicode
    ("unicode", "{{ s|length }} {{ s[0] }} {{ s[-1] }} {{ s|upper }} {{ s|list|length }} {{ s.split('　') }} {{ s|tojson }} {{ [s] }}", {"s": "été 日本　🎉"}),
    # globals
    ("range", "{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }}", {}),
    ("strftime", "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%B %-d, %A %j %p %I %y') }}", {}),
    ("dict_global", "{{ dict(a=1, b='x') }} {{ namespace(k=1).k }}", {}),
    # errors Jinja2 raises
    ("err_undefined_attr", "{{ foo.bar }}", {}),
    ("err_undefined_arith", "{{ foo + 1 }}", {}),
    ("err_type_concat", "{{ 'a' + 1 }}", {}),
    ("err_tilde_binds_tighter", "{{ 'a' ~ 1 + 2 }}", {}),
    ("err_raise", "{{ raise_exception('custom failure') }}", {}),
    ("err_not_iterable", "{% for x in 5 %}{% endfor %}", {}),
    ("err_none_iterable", "{% for x in none %}{% endfor %}", {}),
    ("err_div_zero", "{{ 1 // 0 }}", {}),
    ("err_compare", "{{ 1 < 'a' }}", {}),
    ("err_unpack", "{% for a, b in [[1, 2, 3]] %}{% endfor %}", {}),
    ("err_unknown_filter_runtime", "{% if false %}{{ x|nosuchfilter }}{% endif %}ok", {}),
    ("err_items_on_list", "{{ [1]|items|list }}", {}),
    ("err_range_too_big", "{{ range(1000000)|length }}", {}),
    ("err_ns_assign", "{% set d = {} %}{% set d.x = 1 %}", {}),
    ("err_len_none", "{{ none|length }}", {}),
    ("err_attr_on_undefined_is_defined", "{{ foo.bar is defined }}", {}),
]


def c_string(s):
    return json.dumps(s, ensure_ascii=False)


def main():
    out = sys.stdout
    out.write("// Generated by make-jinja-cases.py from Python Jinja2 %s with Hugging Face's settings.\n" % jinja2.__version__)
    out.write("// {name, template, context JSON, expected output, reference raised an error}\n")
    for name, tpl, ctx in CASES:
        try:
            res, err = env.from_string(tpl).render(**ctx), False
        except Exception as e:  # the reference refused: we must refuse too
            res, err = "%s: %s" % (type(e).__name__, e), True
        out.write("{%s, %s, %s, %s, %s},\n" % (c_string(name), c_string(tpl), c_string(json.dumps(ctx, ensure_ascii=False)),
                                              c_string(res), "true" if err else "false"))


main()
