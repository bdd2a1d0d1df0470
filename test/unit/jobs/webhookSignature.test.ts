import { webhookHeaders, webhookSignature } from '../../../shared/jobs/processors/webhookSignature';

// The Standard Webhooks specification's published test vector
// (https://github.com/standard-webhooks/standard-webhooks, spec/standard-webhooks.md and its libraries' tests).
describe('webhook signatures (Standard Webhooks)', () => {
  test("sign the specification's test vector exactly", () => {
    expect(
      webhookSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  test('carry one signature per secret during a rotation, the current one first', () => {
    const h = webhookHeaders(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA=='], 'm1', 10, '{}');
    expect(h['webhook-id']).toBe('m1');
    expect(h['webhook-timestamp']).toBe('10');
    expect(h['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(h['webhook-signature']?.split(' ')[0]).toBe(webhookSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'm1', 10, '{}'));
  });
});
