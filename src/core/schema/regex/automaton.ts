/**
 * @module The lookaround automaton: a Thompson NFA over code points whose
 * assertion states test position predicates (`^ $ \b \B` and lookarounds).
 * Each lookaround is turned into a boolean array over input positions by one
 * extra simulation (a lookahead runs its body backwards from the end, a
 * lookbehind runs it forwards), innermost first, so a test costs
 * O(input × states × (1 + lookarounds)). Also used for repetition counts beyond
 * RE2's limit; limited to 20 000 states.
 */
import { inRanges, WORD, type Ranges } from './code-points.js';
import type { Node } from './parser.js';

type State =
  | { k: 'char'; ranges: Ranges; out: number }
  | { k: 'split'; out: number; out2: number }
  | { k: 'assert'; pred: number; out: number }
  | { k: 'match' };

/** A position predicate: an anchor, a word boundary, or the result of a lookaround. */
type Predicate =
  | { k: '^' | '$' | 'b' | 'B' }
  | { k: 'look'; negate: boolean; behind: boolean; nfa: Nfa };

interface Nfa {
  states: State[];
  start: number;
  /** Whether the automaton reads the input right to left. */
  backward: boolean;
}

const MAX_STATES = 20_000;

class TooLarge extends Error {}

interface Fragment {
  start: number;
  /** Indices of states whose `out` (or `out2` for splits marked with -2) are still dangling. */
  holes: Array<[number, 'out' | 'out2']>;
}

class NfaBuilder {
  readonly predicates: Predicate[] = [];
  private readonly lookPredicates = new Map<Node, number>();
  private states: State[] = [];

  build(node: Node, backward: boolean): Nfa {
    const saved = this.states;
    this.states = [];
    const frag = this.frag(node, backward);
    const match = this.add({ k: 'match' });
    this.patch(frag, match);
    const nfa: Nfa = { states: this.states, start: frag.start, backward };
    this.states = saved;
    return nfa;
  }

  private add(st: State): number {
    if (this.states.length >= MAX_STATES) throw new TooLarge();
    this.states.push(st);
    return this.states.length - 1;
  }

  private patch(f: Fragment, target: number): void {
    for (const [i, field] of f.holes) (this.states[i] as Record<string, unknown>)[field] = target;
  }

  private empty(): Fragment {
    const i = this.add({ k: 'split', out: -1, out2: -1 });
    // A split whose both exits go to the same place is an epsilon move.
    return { start: i, holes: [[i, 'out'], [i, 'out2']] };
  }

  private frag(n: Node, backward: boolean): Fragment {
    switch (n.t) {
      case 'set': {
        const i = this.add({ k: 'char', ranges: n.ranges, out: -1 });
        return { start: i, holes: [[i, 'out']] };
      }
      case 'assert': {
        this.predicates.push({ k: n.kind });
        const i = this.add({ k: 'assert', pred: this.predicates.length - 1, out: -1 });
        return { start: i, holes: [[i, 'out']] };
      }
      case 'look': {
        // Copies made by counted repetition share one predicate (one table per test).
        let pred = this.lookPredicates.get(n);
        if (pred === undefined) {
          // A lookahead's body is read right to left, a lookbehind's left to right (see `test`).
          const nfa = this.build(n.body, !n.behind);
          this.predicates.push({ k: 'look', negate: n.negate, behind: n.behind, nfa });
          pred = this.predicates.length - 1;
          this.lookPredicates.set(n, pred);
        }
        const i = this.add({ k: 'assert', pred, out: -1 });
        return { start: i, holes: [[i, 'out']] };
      }
      case 'group':
        return this.frag(n.body, backward);
      case 'seq': {
        if (n.items.length === 0) return this.empty();
        const items = backward ? [...n.items].reverse() : n.items;
        const first = this.frag(items[0], backward);
        let holes = first.holes;
        for (const item of items.slice(1)) {
          const f = this.frag(item, backward);
          this.patch({ start: 0, holes }, f.start);
          holes = f.holes;
        }
        return { start: first.start, holes };
      }
      case 'alt': {
        const frags = n.items.map((x) => this.frag(x, backward));
        let start = frags[frags.length - 1].start;
        for (let j = frags.length - 2; j >= 0; j--) start = this.add({ k: 'split', out: frags[j].start, out2: start });
        return { start, holes: frags.flatMap((f) => f.holes) };
      }
      case 'rep': {
        const parts: Fragment[] = [];
        for (let j = 0; j < n.min; j++) parts.push(this.frag(n.body, backward));
        if (n.max === Infinity) {
          const body = this.frag(n.body, backward);
          const loop = this.add({ k: 'split', out: body.start, out2: -1 });
          this.patch(body, loop);
          parts.push({ start: loop, holes: [[loop, 'out2']] });
        } else {
          // Optional copies nest: x{0,2} = (x(x)?)?
          let tail: Fragment | undefined;
          for (let j = n.min; j < n.max; j++) {
            const body = this.frag(n.body, backward);
            const opt = this.add({ k: 'split', out: body.start, out2: -1 });
            if (tail) this.patch(body, tail.start);
            const holes: Fragment['holes'] = [[opt, 'out2'], ...(tail ? tail.holes : body.holes)];
            tail = { start: opt, holes };
          }
          if (tail) parts.push(tail);
        }
        if (parts.length === 0) return this.empty();
        for (let j = 0; j + 1 < parts.length; j++) this.patch(parts[j], parts[j + 1].start);
        return { start: parts[0].start, holes: parts[parts.length - 1].holes };
      }
      default:
        throw new TooLarge(); // backreferences never reach the automaton
    }
  }
}

function isWordChar(cp: number | undefined): boolean {
  return cp !== undefined && inRanges(WORD, cp);
}

/**
 * Runs `nfa` over `cps`, starting a thread at every position, and returns for each position
 * whether a thread reached the match state there. Forward automata move left to right,
 * backward ones right to left.
 */
function simulate(nfa: Nfa, cps: number[], holds: (pred: number, pos: number) => boolean, stopAtFirst: boolean): boolean[] {
  const n = cps.length;
  const reached: boolean[] = new Array<boolean>(n + 1).fill(false);
  const mark = new Int32Array(nfa.states.length).fill(-1);
  let current: number[] = [];
  let next: number[] = [];
  const stack: number[] = [];
  const addClosure = (list: number[], s0: number, pos: number, gen: number): boolean => {
    let matched = false;
    stack.push(s0);
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (s < 0 || mark[s] === gen) continue;
      mark[s] = gen;
      const st = nfa.states[s];
      switch (st.k) {
        case 'char':
          list.push(s);
          break;
        case 'split':
          stack.push(st.out2, st.out);
          break;
        case 'assert':
          if (holds(st.pred, pos)) stack.push(st.out);
          break;
        case 'match':
          matched = true;
          break;
      }
    }
    return matched;
  };
  const positions = nfa.backward ? n : 0;
  const step = nfa.backward ? -1 : 1;
  let pos = positions;
  for (let count = 0; count <= n; count++, pos += step) {
    const gen = count;
    // Carry over the threads that consumed a character into this position, then start a new one.
    let matched = false;
    const list: number[] = [];
    for (const s of current) if (addClosure(list, s, pos, gen)) matched = true;
    if (addClosure(list, nfa.start, pos, gen)) matched = true;
    if (matched) {
      reached[pos] = true;
      if (stopAtFirst) return reached;
    }
    if (count === n) break;
    const cp = nfa.backward ? cps[pos - 1] : cps[pos];
    next = [];
    for (const s of list) {
      const st = nfa.states[s] as Extract<State, { k: 'char' }>;
      if (inRanges(st.ranges, cp)) next.push(st.out);
    }
    current = next;
  }
  return reached;
}

export function compileAutomaton(ast: Node): { test(input: string): boolean; lookarounds: number } | undefined {
  const builder = new NfaBuilder();
  let main: Nfa;
  try {
    main = builder.build(ast, false);
  } catch (e) {
    if (e instanceof TooLarge) return undefined;
    throw e;
  }
  const predicates = builder.predicates;
  return {
    lookarounds: predicates.filter((p) => p.k === 'look').length,
    test(input: string): boolean {
      const cps = Array.from(input, (c) => c.codePointAt(0)!);
      const n = cps.length;
      // Lookaround tables are filled lazily, innermost first (an inner table is needed while
      // simulating the outer body, and is computed on that first use).
      const tables: Array<boolean[] | undefined> = [];
      const holds = (pred: number, pos: number): boolean => {
        const p = predicates[pred];
        switch (p.k) {
          case '^':
            return pos === 0;
          case '$':
            return pos === n;
          case 'b':
            return isWordChar(cps[pos - 1]) !== isWordChar(cps[pos]);
          case 'B':
            return isWordChar(cps[pos - 1]) === isWordChar(cps[pos]);
          default: {
            let table = tables[pred];
            if (!table) {
              // A lookahead at i holds when its body, read backwards from some j >= i, reaches i.
              const reached = simulate(p.nfa, cps, holds, false);
              table = p.negate ? reached.map((r) => !r) : reached;
              tables[pred] = table;
            }
            return table[pos];
          }
        }
      };
      return simulate(main, cps, holds, true).some(Boolean);
    },
  };
}
