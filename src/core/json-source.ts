/**
 * @module A scanner over text already known to be valid JSON (JSON.parse accepted
 * it) that only finds where values start and end. Transports use it to hand the
 * verifier the exact source text of a request nested in an envelope (MCP
 * `params.arguments`, an A2A data part), so the strict parser sees the bytes the
 * client sent, duplicate keys included. Iterative: no nesting depth overflows it.
 */

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

export class JsonSourceScanner {
  pos = 0;
  constructor(readonly text: string) {}

  /** Skip whitespace. */
  ws(): void {
    while (this.pos < this.text.length && isJsonSpace(this.text.charCodeAt(this.pos))) this.pos++;
  }

  /** Skip a string token; pos must be on its opening quote. */
  skipString(): void {
    const t = this.text;
    let i = this.pos + 1;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x5c) i += 2;
      else if (c === 0x22) break;
      else i++;
    }
    this.pos = i + 1;
  }

  /** Read a string token's value (keys on a path are short). */
  readString(): string {
    const start = this.pos;
    this.skipString();
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  /** The code unit of the next token (after any whitespace); pos is left on it. */
  peek(): number {
    this.ws();
    return this.text.charCodeAt(this.pos);
  }

  /**
   * Walk the members of the object at pos, calling `visit` with each key while pos is on
   * its value; `visit` must consume the value, or return false to have it skipped.
   * Leaves pos after the object.
   */
  members(visit: (key: string) => boolean): void {
    this.ws();
    this.pos++; // {
    if (this.peek() === 0x7d) {
      this.pos++;
      return;
    }
    for (;;) {
      this.ws();
      const key = this.readString();
      this.ws();
      this.pos++; // :
      this.ws();
      if (!visit(key)) this.skipValue();
      if (this.peek() === 0x2c) {
        this.pos++;
        continue;
      }
      this.pos++; // }
      return;
    }
  }

  /** Walk the elements of the array at pos; `visit` must consume each element. Leaves pos after the array. */
  elements(visit: (index: number) => void): void {
    this.ws();
    this.pos++; // [
    if (this.peek() === 0x5d) {
      this.pos++;
      return;
    }
    for (let i = 0; ; i++) {
      this.ws();
      visit(i);
      if (this.peek() === 0x2c) {
        this.pos++;
        continue;
      }
      this.pos++; // ]
      return;
    }
  }

  /** Skip the value that starts at pos (after any whitespace). */
  skipValue(): void {
    this.ws();
    const t = this.text;
    const c = t.charCodeAt(this.pos);
    if (c === 0x22) return this.skipString();
    if (c !== 0x7b && c !== 0x5b) {
      while (this.pos < t.length) {
        const d = t.charCodeAt(this.pos);
        if (d === 0x2c || d === 0x7d || d === 0x5d || isJsonSpace(d)) break;
        this.pos++;
      }
      return;
    }
    let depth = 0;
    while (this.pos < t.length) {
      const d = t.charCodeAt(this.pos);
      if (d === 0x22) {
        this.skipString();
        continue;
      }
      this.pos++;
      if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return;
    }
  }
}
