import { createHmac } from 'node:crypto';

import { verifyWebhook, WebhookVerificationError } from '../../src/webhooks';

// The Standard Webhooks specification's published test vector
// (https://github.com/standard-webhooks/standard-webhooks, spec/standard-webhooks.md and its libraries' tests).
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const timestamp = 1614265330;
const body = '{"test": 2432232314}';
const signature = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

const headers = (sig = signature, ts = String(timestamp)) =>
  new Headers({ 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig });

describe('verifyWebhook', () => {
  test("accepts the specification's test vector and answers the parsed body", async () => {
    await expect(verifyWebhook({ secret, headers: headers(), body, now: timestamp + 10 })).resolves.toEqual({ test: 2432232314 });
  });

  test('accepts either of two signatures (a secret rotation) and plain header objects', async () => {
    const other = `v1,${createHmac('sha256', Buffer.alloc(32, 7)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    const plain = { 'Webhook-Id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `${other} ${signature}` };
    await expect(verifyWebhook({ secret, headers: plain, body, now: timestamp })).resolves.toEqual({ test: 2432232314 });
  });

  test.each([
    ['an altered body', { body: '{"test": 2432232315}' }],
    ['another secret', { secret: 'whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA==' }],
    ['a timestamp too old', { now: timestamp + 301 }],
    ['a timestamp from the future', { now: timestamp - 301 }],
    ['no signature header', { headers: new Headers({ 'webhook-id': id, 'webhook-timestamp': String(timestamp) }) }],
    ['a truncated signature', { headers: headers(signature.slice(0, -2)) }],
  ])('rejects %s', async (_name, change) => {
    await expect(verifyWebhook({ secret, headers: headers(), body, now: timestamp, ...change })).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
  });
});
