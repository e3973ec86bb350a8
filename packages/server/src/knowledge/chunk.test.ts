import { describe, expect, it } from 'vitest';
import { chunkText } from './chunk.js';

describe('chunkText', () => {
  it('starts a passage at each heading, titled with the headings above it, and keeps paragraphs whole', () => {
    const chunks = chunkText('Intro line.\n\n# A\n\nOne.\n\nTwo.\n\n## B\n\nThree.\n\n# C\n\nFour.\n');
    expect(chunks).toEqual([
      { title: '', text: 'Intro line.' },
      { title: 'A', text: 'One.\n\nTwo.' },
      { title: 'A > B', text: 'Three.' },
      { title: 'C', text: 'Four.' },
    ]);
  });

  it('reads # inside fenced code, and in plain text, as text', () => {
    expect(chunkText('# T\n\n```sh\n# a comment\n\necho\n```\n')).toEqual([
      { title: 'T', text: '```sh\n# a comment\n\necho\n```' },
    ]);
    expect(chunkText('# not a heading\n', { headings: false, title: 'Page 1' })).toEqual([
      { title: 'Page 1', text: '# not a heading' },
    ]);
  });

  it('joins paragraphs up to the limit, and cuts a longer paragraph at sentence ends', () => {
    const sentence = 'This sentence has forty characters in it. ';
    const chunks = chunkText(`# Long\n\n${sentence.repeat(10).trim()}\n\nShort.\n`, { max: 100 });
    expect(chunks.every((c) => c.text.length <= 100)).toBe(true);
    const joined = chunks.map((c) => c.text.replace(/\n\n/g, ' ')).join(' ');
    expect(joined).toBe(`${sentence.repeat(10).trim()} Short.`);
    expect(new Set(chunks.map((c) => c.title))).toEqual(new Set(['Long']));
  });

  it('reads closing # sequences as CommonMark does', () => {
    expect(chunkText('# A ##\n\nx\n## B#\n\ny\n### ###\n\nz\n#### C \t#  \n\nw\n').map((c) => c.title)).toEqual([
      'A',
      'A > B#',
      'A > B#', // `### ###` is an empty heading
      'A > B# > C',
    ]);
  });

  // A heading line of spaces ended by a character `.` does not match (U+2028) made the old heading regex
  // backtrack cubically: 8 KB blocked the event loop for 11 s. Each of these inputs is 1 MB.
  it.each([
    ['heading lines of blanks ended by U+2028', `#${' \t'.repeat(100)}\u2028\nbody\n`],
    ['heading lines of " #" runs', `# ${' #'.repeat(100)} x\nbody\n`],
    ['one heading line of 1 MB', `# ${' '.repeat(1024 * 1024)}\u2028\nbody`],
    ['fenced lines and sentence ends', '```\n. . . ! ? \n'],
  ])('splits 1 MB of %s in linear time', (_name, unit) => {
    const text = unit.repeat(Math.ceil((1024 * 1024) / unit.length));
    const started = performance.now();
    const chunks = chunkText(text);
    const took = performance.now() - started;
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.text.length <= 1500)).toBe(true);
    expect(took).toBeLessThan(2000);
  });

  it('gives nothing for blank text', () => {
    expect(chunkText('\n \n\t\n')).toEqual([]);
  });
});
