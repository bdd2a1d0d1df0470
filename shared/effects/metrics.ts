/**
 * The effects' telemetry: a span for each message an effect sends and each webhook it calls, a child
 * of the span that fired it (a gate run's action, a schedule's run), whose W3C `traceparent` travels
 * with what is sent so the consumer's own tracing continues the trace (the OpenTelemetry messaging
 * conventions: the context is carried in the message):
 *
 * - a storage queue message (a gate run's `enqueue` on `gate-actions`, a schedule's `queueMessage`):
 *   a JSON object message gets a `traceparent` member (a storage message has no headers); a string,
 *   array or other value is sent unchanged;
 * - a Service Bus message: the application properties `traceparent` and `Diagnostic-Id` (the name
 *   the Azure SDKs and the Functions Service Bus trigger read);
 * - a webhook: the `traceparent` header.
 */
import { callerName, declareTelemetry, httpStatus, oneOf, span } from '../telemetry/declare';

export const effectTelemetry = declareTelemetry(
  'tallyho.effects',
  {},
  {
    send: span({
      name: 'tallyho.effect.send',
      kind: 'producer',
      description:
        "A message sent (a gate run's enqueue action, a schedule's queue or Service Bus target), carrying this span's traceparent.",
      attributes: {
        'messaging.system': oneOf('azure_storage_queues', 'servicebus'),
        'messaging.operation.type': oneOf('send'),
        'messaging.operation.name': oneOf('send'),
        'messaging.destination.name': callerName('destination'),
      },
    }),
    webhook: span({
      name: 'tallyho.effect.webhook',
      kind: 'client',
      description: "A schedule's webhook call, with this span's traceparent header.",
      attributes: { 'http.request.method': oneOf('POST'), 'http.response.status_code': httpStatus },
    }),
  },
);
