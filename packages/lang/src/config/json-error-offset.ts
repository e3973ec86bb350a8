// JSON.parse does not always say where it stopped (V8 omits the position for an unexpected token), so when it
// fails this small scanner walks the text again to find the offset of the first error, for a precise diagnostic.

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

class Fail {
  constructor(readonly offset: number) {}
}

class Scanner {
  i = 0;
  constructor(private readonly text: string) {}

  private skip(): void {
    while (this.i < this.text.length && WHITESPACE.has(this.text[this.i])) this.i++;
  }

  private expect(word: string): void {
    for (const ch of word) {
      if (this.text[this.i] !== ch) throw new Fail(this.i);
      this.i++;
    }
  }

  value(depth = 0): void {
    if (depth > 10_000) throw new Fail(this.i);
    this.skip();
    const ch = this.text[this.i];
    if (ch === '{') this.object(depth);
    else if (ch === '[') this.array(depth);
    else if (ch === '"') this.string();
    else if (ch === 't') this.expect('true');
    else if (ch === 'f') this.expect('false');
    else if (ch === 'n') this.expect('null');
    else this.number();
  }

  private number(): void {
    const number = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!number) throw new Fail(this.i);
    this.i += number[0].length;
  }

  private string(): void {
    this.i++;
    while (this.i < this.text.length) {
      const ch = this.text[this.i];
      if (ch === '"') {
        this.i++;
        return;
      }
      if (ch < ' ') throw new Fail(this.i);
      if (ch === '\\') {
        const next = this.text[this.i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) throw new Fail(this.i);
          this.i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(next ?? 'x')) throw new Fail(this.i);
        this.i += 2;
        continue;
      }
      this.i++;
    }
    throw new Fail(this.i);
  }

  private object(depth: number): void {
    this.i++;
    this.skip();
    if (this.text[this.i] === '}') {
      this.i++;
      return;
    }
    for (;;) {
      this.skip();
      if (this.text[this.i] !== '"') throw new Fail(this.i);
      this.string();
      this.skip();
      this.expect(':');
      this.value(depth + 1);
      this.skip();
      if (this.text[this.i] === ',') this.i++;
      else if (this.text[this.i] === '}') {
        this.i++;
        return;
      } else throw new Fail(this.i);
    }
  }

  private array(depth: number): void {
    this.i++;
    this.skip();
    if (this.text[this.i] === ']') {
      this.i++;
      return;
    }
    for (;;) {
      this.value(depth + 1);
      this.skip();
      if (this.text[this.i] === ',') this.i++;
      else if (this.text[this.i] === ']') {
        this.i++;
        return;
      } else throw new Fail(this.i);
    }
  }
}

/** The offset of the first JSON syntax error in `text` (the text's length when it ends too early). */
export function jsonErrorOffset(text: string): number {
  const scanner = new Scanner(text);
  try {
    scanner.value();
    // Anything after the value is an error too.
    const rest = text.slice(scanner.i);
    const extra = rest.search(/\S/);
    return extra < 0 ? text.length : scanner.i + extra;
  } catch (error) {
    if (error instanceof Fail) return Math.min(error.offset, text.length);
    return text.length;
  }
}
