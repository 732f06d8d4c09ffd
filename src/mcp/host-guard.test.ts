/** @module Unit tests of the Host/Origin hostname checks (DNS-rebinding protection). */
import { describe, expect, it } from 'vitest';
import { checkHostAndOrigin, hostnameOfHost, hostnameOfOrigin, normaliseAllowedHosts } from './host-guard.js';

describe('hostnameOfHost', () => {
  it.each([
    ['example.com', 'example.com'],
    ['Example.COM:8080', 'example.com'],
    ['example.com.', 'example.com'],
    ['127.0.0.1:80', '127.0.0.1'],
    ['[::1]', '::1'],
    ['[::1]:8080', '::1'],
    ['[2001:DB8::1]:443', '2001:db8::1'],
  ])('%s → %s', (host, name) => expect(hostnameOfHost(host)).toBe(name));

  it.each([undefined, '', ' ', '::1', 'a:b:c', 'host:port', 'host:', '[::1', '[::1]x', 'user@host', 'a/b', 'host:123456'])(
    'rejects %s',
    (host) => expect(hostnameOfHost(host)).toBeNull(),
  );
});

describe('hostnameOfOrigin', () => {
  it('reads http(s) origins and refuses opaque ones', () => {
    expect(hostnameOfOrigin('https://App.example.com:3000')).toBe('app.example.com');
    expect(hostnameOfOrigin('http://[::1]:6274')).toBe('::1');
    expect(hostnameOfOrigin('null')).toBeNull();
    expect(hostnameOfOrigin('file://')).toBeNull();
    expect(hostnameOfOrigin('chrome-extension://abc')).toBeNull();
  });
});

describe('checkHostAndOrigin', () => {
  const allowed = normaliseAllowedHosts(['verifier.example.com', 'http://proxy.example.net:8080', '[::1]', '127.0.0.1:9999', '::2']);

  it('normalises every way of writing an allowed host', () => {
    expect([...allowed].sort()).toEqual(['127.0.0.1', '::1', '::2', 'proxy.example.net', 'verifier.example.com']);
  });

  it('compares hostnames, not ports', () => {
    expect(checkHostAndOrigin(allowed, 'verifier.example.com:1234', undefined)).toEqual({ ok: true });
    expect(checkHostAndOrigin(allowed, 'proxy.example.net', 'https://verifier.example.com')).toEqual({ ok: true });
    expect(checkHostAndOrigin(allowed, '[::2]:80', undefined)).toEqual({ ok: true });
  });

  it('refuses a foreign or missing Host, and a foreign or opaque Origin', () => {
    expect(checkHostAndOrigin(allowed, 'evil.example', undefined).ok).toBe(false);
    expect(checkHostAndOrigin(allowed, 'verifier.example.com.evil.example', undefined).ok).toBe(false);
    expect(checkHostAndOrigin(allowed, undefined, undefined).ok).toBe(false);
    expect(checkHostAndOrigin(allowed, '127.0.0.1', 'http://evil.example').ok).toBe(false);
    expect(checkHostAndOrigin(allowed, '127.0.0.1', 'null').ok).toBe(false);
  });

  it('allows anything with *', () => {
    expect(checkHostAndOrigin(normaliseAllowedHosts(['*']), 'anything.example', 'http://other.example').ok).toBe(true);
  });
});
