// Safe Markdown for model replies: the text is parsed here and the result is built from DOM
// nodes (createElement + text nodes) only. Nothing is ever assigned to innerHTML, so HTML in a
// reply (<script>, <img onerror=…>) stays visible text and cannot run.
//
// Blocks: ATX headings, paragraphs (a single newline is a line break), fenced code (``` or ~~~,
// with a copy button), indented lists (-, *, +, 1.), block quotes, horizontal rules.
// Inline: `code`, **strong**, __strong__, *em*, _em_, ~~strike~~, [text](url), <url>, bare
// http(s) URLs, backslash escapes. Links open in a new tab with rel="noopener noreferrer" and
// only http:, https: and mailto: targets; anything else (javascript:, data:) stays text.
// Images are shown as links: a reply never makes the page load anything.
'use strict';

(function () {
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
  const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
  const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const QUOTE = /^ {0,3}> ?(.*)$/;
  const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
  const MAX_DEPTH = 12;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function safeHref(raw) {
    const href = raw.trim();
    if (/^mailto:[^\s]+$/i.test(href)) return href;
    try {
      const u = new URL(href, window.location.href);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && /^(https?:)?\/\//i.test(href)) return u.href;
    } catch (e) {
      /* not a URL */
    }
    return null;
  }

  function link(href, label) {
    const a = el('a');
    a.href = href;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    a.append(...label);
    return a;
  }

  // Copy to the clipboard; falls back to a selection when the Clipboard API is unavailable
  // (plain http on another host is not a secure context).
  function copyText(text, button) {
    const done = () => {
      const was = button.textContent;
      button.textContent = 'Copied';
      setTimeout(() => { button.textContent = was; }, 1200);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, () => fallback());
    } else {
      fallback();
    }
    function fallback() {
      const t = el('textarea');
      t.value = text;
      t.setAttribute('readonly', '');
      t.className = 'offscreen';
      document.body.append(t);
      t.select();
      try { document.execCommand('copy'); done(); } catch (e) { /* nothing to do */ }
      t.remove();
    }
  }

  // ---- inline ----

  function findClosing(s, from, delim) {
    for (let i = from; i <= s.length - delim.length; i++) {
      if (s[i] === '\\') { i++; continue; }
      if (s[i] === '`') {  // skip code spans
        const run = /^`+/.exec(s.slice(i))[0];
        const end = s.indexOf(run, i + run.length);
        if (end < 0) return -1;
        i = end + run.length - 1;
        continue;
      }
      // A closer is a run of exactly the delimiter's length, after a non-space.
      if (s.startsWith(delim, i) && i > from && !/\s/.test(s[i - 1]) && s[i - 1] !== delim[0] &&
          s[i + delim.length] !== delim[0]) return i;
    }
    return -1;
  }

  // [label](target) starting at s[i] === '['; returns {label, href, end} or null.
  function parseLink(s, i) {
    let depth = 0;
    let j = i;
    for (; j < s.length; j++) {
      if (s[j] === '\\') { j++; continue; }
      if (s[j] === '[') depth++;
      else if (s[j] === ']' && --depth === 0) break;
    }
    if (j >= s.length || s[j + 1] !== '(') return null;
    let k = j + 2;
    let paren = 1;
    for (; k < s.length; k++) {
      if (s[k] === '\\') { k++; continue; }
      if (s[k] === '(') paren++;
      else if (s[k] === ')' && --paren === 0) break;
    }
    if (k >= s.length) return null;
    let target = s.slice(j + 2, k).trim();
    const titled = /^(\S+)\s+["'(].*["')]$/.exec(target);
    if (titled) target = titled[1];
    if (target.startsWith('<') && target.endsWith('>')) target = target.slice(1, -1);
    return { label: s.slice(i + 1, j), href: target, end: k + 1 };
  }

  function inline(s, depth) {
    const out = [];
    let text = '';
    const flush = () => {
      if (text) out.push(document.createTextNode(text));
      text = '';
    };
    if (depth > MAX_DEPTH) return [document.createTextNode(s)];
    for (let i = 0; i < s.length;) {
      const c = s[i];
      if (c === '\\' && i + 1 < s.length && /[!-/:-@[-`{-~]/.test(s[i + 1])) {
        text += s[i + 1];
        i += 2;
        continue;
      }
      if (c === '\n') {
        flush();
        out.push(el('br'));
        i++;
        continue;
      }
      if (c === '`') {
        const run = /^`+/.exec(s.slice(i))[0];
        const end = s.indexOf(run, i + run.length);
        if (end > 0) {
          flush();
          let code = s.slice(i + run.length, end);
          if (/^ .* $/.test(code)) code = code.slice(1, -1);
          out.push(el('code', null, code));
          i = end + run.length;
          continue;
        }
        text += run;
        i += run.length;
        continue;
      }
      if (c === '!' && s[i + 1] === '[') {  // an image: its link, never a request
        const l = parseLink(s, i + 1);
        if (l) {
          const href = safeHref(l.href);
          flush();
          out.push(href ? link(href, inline(l.label || href, depth + 1)) : document.createTextNode(s.slice(i, l.end)));
          i = l.end;
          continue;
        }
      }
      if (c === '[') {
        const l = parseLink(s, i);
        if (l) {
          const href = safeHref(l.href);
          flush();
          if (href) out.push(link(href, inline(l.label, depth + 1)));
          else out.push(...inline(l.label, depth + 1), document.createTextNode(' (' + l.href + ')'));
          i = l.end;
          continue;
        }
      }
      if (c === '<') {
        const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(s.slice(i));
        if (m && safeHref(m[1])) {
          flush();
          out.push(link(safeHref(m[1]), [document.createTextNode(m[1])]));
          i += m[0].length;
          continue;
        }
      }
      if ((c === 'h' || c === 'H') && (i === 0 || /[\s(]/.test(s[i - 1]))) {
        const m = /^https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"]/i.exec(s.slice(i));
        if (m && safeHref(m[0])) {
          flush();
          out.push(link(safeHref(m[0]), [document.createTextNode(m[0])]));
          i += m[0].length;
          continue;
        }
      }
      const delims = [['**', 'strong'], ['__', 'strong'], ['~~', 'del'], ['*', 'em'], ['_', 'em']];
      let matched = false;
      const run = /^([*_~])\1*/.exec(s.slice(i));
      for (const [d, tag] of delims) {
        if (!s.startsWith(d, i) || !run || run[0].length !== d.length) continue;
        if (d[0] === '_' && i > 0 && /[A-Za-z0-9]/.test(s[i - 1])) continue;  // snake_case
        if (/\s/.test(s[i + d.length] || ' ')) continue;
        const end = findClosing(s, i + d.length, d);
        if (end < 0) continue;
        if (d[0] === '_' && /[A-Za-z0-9]/.test(s[end + d.length] || '')) continue;
        flush();
        const e = el(tag);
        e.append(...inline(s.slice(i + d.length, end), depth + 1));
        out.push(e);
        i = end + d.length;
        matched = true;
        break;
      }
      if (matched) continue;
      text += c;
      i++;
    }
    flush();
    return out;
  }

  // ---- blocks ----

  function codeBlock(code, lang) {
    const wrap = el('div', 'code-block');
    const bar = el('div', 'code-bar');
    bar.append(el('span', 'code-lang', lang || 'text'));
    const copy = el('button', 'copy', 'Copy');
    copy.type = 'button';
    copy.setAttribute('aria-label', 'Copy this code');
    copy.addEventListener('click', () => copyText(code, copy));
    bar.append(copy);
    const pre = el('pre');
    const c = el('code', null, code);
    if (lang && /^[\w+#.-]{1,30}$/.test(lang)) c.className = 'language-' + lang;
    pre.append(c);
    pre.tabIndex = 0;  // scrollable by keyboard
    wrap.append(bar, pre);
    return wrap;
  }

  function startsBlock(line) {
    return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
  }

  function indentOf(line) {
    const m = /^[ \t]*/.exec(line)[0];
    return m.replace(/\t/g, '    ').length;
  }

  function blocks(lines, parent, depth) {
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) { i++; continue; }
      if (depth > MAX_DEPTH) {
        parent.append(el('p', null, lines.slice(i).join('\n')));
        return;
      }
      let m;
      if ((m = FENCE.exec(line))) {
        const fence = m[1];
        const body = [];
        i++;
        while (i < lines.length && !new RegExp('^ {0,3}' + fence[0] + '{' + fence.length + ',}\\s*$').test(lines[i])) {
          body.push(lines[i]);
          i++;
        }
        i++;  // the closing fence (or the end: an unfinished block while streaming)
        parent.append(codeBlock(body.join('\n'), m[2]));
        continue;
      }
      if ((m = HEADING.exec(line))) {
        const level = Math.min(6, m[1].length + 2);  // the page's own h1/h2 come first
        const h = el('h' + level, 'md-h' + m[1].length);
        h.append(...inline(m[2] || '', depth));
        parent.append(h);
        i++;
        continue;
      }
      if (RULE.test(line)) {
        parent.append(el('hr'));
        i++;
        continue;
      }
      if (QUOTE.test(line)) {
        const inner = [];
        while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
          inner.push(m[1]);
          i++;
        }
        const q = el('blockquote');
        blocks(inner, q, depth + 1);
        parent.append(q);
        continue;
      }
      if ((m = ITEM.exec(line))) {
        const ordered = /\d/.test(m[2][0]);
        const list = el(ordered ? 'ol' : 'ul');
        if (ordered && parseInt(m[2], 10) !== 1) list.start = parseInt(m[2], 10);
        const base = m[1].length;
        while (i < lines.length && (m = ITEM.exec(lines[i])) && m[1].length === base && /\d/.test(m[2][0]) === ordered) {
          const content = m[2].length + m[3].length + base;
          const item = [m[4]];
          i++;
          while (i < lines.length) {
            const l = lines[i];
            if (!l.trim()) {
              // A blank line continues the item only if an indented line follows.
              if (i + 1 < lines.length && indentOf(lines[i + 1]) >= content) { item.push(''); i++; continue; }
              break;
            }
            if (indentOf(l) >= content) { item.push(l.slice(Math.min(content, l.length - l.trimStart().length))); i++; continue; }
            if (ITEM.test(l) || startsBlock(l)) break;
            item.push(l.trim());  // lazy continuation
            i++;
          }
          const li = el('li');
          if (item.length === 1 || !item.slice(1).some((x) => startsBlock(x) || !x.trim())) {
            li.append(...inline(item.join('\n'), depth));
          } else {
            blocks(item, li, depth + 1);
          }
          list.append(li);
        }
        parent.append(list);
        continue;
      }
      const para = [];
      while (i < lines.length && lines[i].trim() && (para.length === 0 || !startsBlock(lines[i]))) {
        para.push(lines[i].replace(/^ {0,3}/, ''));
        i++;
      }
      const p = el('p');
      p.append(...inline(para.join('\n'), depth));
      parent.append(p);
    }
  }

  function render(text) {
    const frag = document.createDocumentFragment();
    blocks(String(text).replace(/\r\n?/g, '\n').split('\n'), frag, 0);
    return frag;
  }

  window.NurlMarkdown = { render, copyText };
})();
