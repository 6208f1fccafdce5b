// Reads a JSON array of Markdown documents on stdin and prints a JSON array
// of {text, html, links} objects: the text a reader of each document sees (block
// boundaries as newlines) and how many raw-HTML tokens the parser found
// (always 0 for headgate's output), and the link and image destinations. Used by markdown/commonmark_test.go.
import markdownit from 'markdown-it';

// The commonmark preset stops at 20 levels of nesting; specs nest lists deeper.
const md = markdownit('commonmark', { maxNesting: 1000 }).enable('table');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const out = JSON.parse(input).map((src) => {
    const parts = [];
    let html = 0;
    const links = [];
    const walk = (tokens) => {
      for (const t of tokens) {
        switch (t.type) {
          case 'text': case 'code_inline': parts.push(t.content); break;
          case 'code_block': case 'fence': parts.push('\n' + t.content + '\n'); break;
          case 'softbreak': case 'hardbreak': parts.push('\n'); break;
          case 'html_block': case 'html_inline': html++; parts.push(t.content); break;
          case 'image': links.push(t.attrGet('src')); break; // alt text: the HTML's text does not include it either
          case 'link_open': links.push(t.attrGet('href')); parts.push('\n'); break;
          case 'inline': walk(t.children || []); break;
          default:
            if (t.nesting !== 0 || t.block) parts.push('\n');
        }
      }
    };
    walk(md.parse(src, {}));
    return { text: parts.join(''), html, links };
  });
  process.stdout.write(JSON.stringify(out));
});
