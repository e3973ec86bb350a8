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

  it('gives nothing for blank text', () => {
    expect(chunkText('\n \n\t\n')).toEqual([]);
  });
});
