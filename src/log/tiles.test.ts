/** @module Tile paths and layout against the examples of the C2SP tlog-tiles specification. */
import { describe, expect, it } from 'vitest';
import { decodeEntryBundle, encodeEntryBundle, encodeTileIndex, parseTilePath, tileExists, tilePath, tilesOfTree } from './tiles.js';

describe('C2SP tlog-tiles layout', () => {
  it('writes tile indexes as the spec example (1234067 → x001/x234/067)', () => {
    expect(encodeTileIndex(1234067)).toBe('x001/x234/067');
    expect(encodeTileIndex(0)).toBe('000');
    expect(encodeTileIndex(1000)).toBe('x001/000');
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: -1, index: 2, width: 5 })).toBe('tile/entries/002.p/5');
  });
  it('parses canonical paths only', () => {
    expect(parseTilePath('0/x001/x234/067')).toEqual({ level: 0, index: 1234067, width: 256 });
    expect(parseTilePath('2/000.p/17')).toEqual({ level: 2, index: 0, width: 17 });
    expect(parseTilePath('entries/001.p/255')).toEqual({ level: -1, index: 1, width: 255 });
    for (const bad of ['0/1', '0/0001', '00/000', '0/000.p/256', '0/000.p/0', '0/000.p/05', '0/x000/001', '64/000', '0/001/002', 'x/000']) {
      expect(parseTilePath(bad)).toBeNull();
    }
  });
  it('a tree of 70,000 has 273 full level-0 tiles, a partial of 112, one full and a partial of 17 at level 1, a partial of 1 at level 2', () => {
    const tiles = tilesOfTree(70_000);
    const at = (l: number) => tiles.filter((t) => t.level === l);
    expect(at(0).filter((t) => t.width === 256)).toHaveLength(273);
    expect(at(0).filter((t) => t.width < 256)).toEqual([{ level: 0, index: 273, width: 112 }]);
    expect(at(1)).toEqual([
      { level: 1, index: 0, width: 256 },
      { level: 1, index: 1, width: 17 },
    ]);
    expect(at(2)).toEqual([{ level: 2, index: 0, width: 1 }]);
    expect(at(3)).toEqual([]);
  });
  it('a tree of 256 is a full level-0 tile and a level-1 partial of width 1', () => {
    expect(tilesOfTree(256)).toEqual([
      { level: 0, index: 0, width: 256 },
      { level: 1, index: 0, width: 1 },
    ]);
    expect(tileExists({ level: 0, index: 1, width: 1 }, 256)).toBe(false);
    expect(tileExists({ level: 0, index: 0, width: 200 }, 256)).toBe(true);
  });
  it('entry bundles are big-endian uint16 length-prefixed', () => {
    const b = encodeEntryBundle([Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(300, 1)]);
    expect(b.subarray(0, 5).toString('hex')).toBe('0001610000');
    expect(decodeEntryBundle(b).map((e) => e.length)).toEqual([1, 0, 300]);
    expect(() => decodeEntryBundle(b.subarray(0, b.length - 1))).toThrow();
  });
});
