// The pure rules of webhooks: which addresses are public, which URLs are accepted, the
// retry delay, and signatures as the specification's reference library checks them.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { isPublicAddress, urlFault } from '../../src/webhooks/address.js';
import { nextDelayMs } from '../../src/webhooks/delivery.js';
import { newSecret } from '../../src/webhooks/secrets.js';
import { webhookHeaders } from '../../src/webhooks/signature.js';

describe('webhook rules', () => {
  it('private, loopback, link-local, shared, multicast and metadata addresses are not public', () => {
    for (const address of ['127.0.0.1', '10.0.0.8', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1', 'not-an-ip']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublicAddress(address), address).toBe(true);
  });

  it('every IPv6 form that embeds a refused IPv4 address is refused: mapped, compatible, 6to4, NAT64, Teredo', () => {
    // As a URL's host, [::127.0.0.1] is normalised to [::7f00:1]: both spellings are judged alike.
    for (const host of ['[::127.0.0.1]', '[::7f00:1]', '[2002:7f00:1::]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::ffff:a00:1]', '[2002:a9fe:a9fe::1]', '[::10.0.0.1]', '[64:ff9b::7f00:1]', '[64:ff9b:1::1]', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]']) {
      const address = new URL(`http://${host}/`).hostname.replace(/^\[|\]$/g, '');
      expect(isPublicAddress(address), host).toBe(false);
    }
    for (const address of ['2002:808:808::1', '::ffff:808:808', '::808:808', '2a00:1450:4001:80b::200e']) expect(isPublicAddress(address), address).toBe(true);
  });

  it('endpoint URLs are https (http only when allowed), absolute, without credentials', () => {
    const strict = { allowHttp: false, allowPrivate: false };
    expect(urlFault('https://hooks.example.com/crm', strict)).toBeUndefined();
    expect(urlFault('http://hooks.example.com/crm', strict)).toBe('must be an https:// URL');
    expect(urlFault('http://hooks.example.com/crm', { ...strict, allowHttp: true })).toBeUndefined();
    expect(urlFault('ftp://hooks.example.com', { ...strict, allowHttp: true })).toBe('must be an http:// or https:// URL');
    expect(urlFault('/relative', strict)).toBe('must be an absolute URL');
    expect(urlFault('https://user:pw@hooks.example.com', strict)).toBe('must not carry a user name or password');
  });

  it('the next attempt waits the schedule with ±10% jitter, or a longer Retry-After (up to a day)', () => {
    for (let i = 0; i < 100; i++) {
      const delay = nextDelayMs(300, undefined);
      expect(delay).toBeGreaterThanOrEqual(270_000);
      expect(delay).toBeLessThanOrEqual(330_000);
    }
    expect(nextDelayMs(5, 60)).toBe(60_000);
    expect(nextDelayMs(5, 10 ** 9)).toBe(86_400_000);
  });

  it('signatures verify with the reference library, one per secret', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const body = JSON.stringify({ id: 'evt_1', type: 'customer.created', data: { object: { name: 'Zoë' } } });
    const headers = webhookHeaders([current, previous], 'evt_1', body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });
});
