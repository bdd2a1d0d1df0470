/**
 * The live figures at the top of a capability's page (GET /api/figures/…): polled on their own, and
 * shown only while the latest read succeeded. usePolling keeps the last good data through a failed
 * refresh (right for a list), but a figure an operator acts on must not look current when it is not:
 * after a failed read the numbers are replaced by the failure, and the time of the last good read.
 */
import type { ComponentChildren } from 'preact';

import { ProblemNotice, When } from './components';
import type { Resource } from './hooks';

export interface Figure {
  readonly label: string;
  readonly value: ComponentChildren;
  /** Drawn as a warning: the figure is past what needs an operator's look. */
  readonly alarm?: boolean;
  /** One line under the value: what it is made of. */
  readonly detail?: ComponentChildren;
}

export function Figures<T>({
  title,
  resource,
  figures,
  readAt,
}: {
  title: string;
  resource: Resource<T>;
  figures: (data: T) => readonly Figure[];
  readAt: (data: T) => string;
}) {
  const failed = resource.error !== undefined;
  return (
    <div class="figures" role="group" aria-label={title} data-state={failed ? 'failed' : resource.data === undefined ? 'loading' : 'ok'}>
      {failed ? (
        <>
          <p class="figures-failed">
            {title}: the latest read failed
            {resource.data === undefined ? null : (
              <>
                {' '}
                (last good read <When iso={readAt(resource.data)} />)
              </>
            )}
          </p>
          <ProblemNotice error={resource.error} />
        </>
      ) : resource.data === undefined ? (
        <p class="muted">Reading {title.toLowerCase()}…</p>
      ) : (
        <>
          <dl>
            {figures(resource.data).map((f) => (
              <div key={f.label} class={f.alarm === true ? 'figure alarm' : 'figure'} data-figure={f.label}>
                <dt>{f.label}</dt>
                <dd>
                  <span class="figure-value">{f.value}</span>
                  {f.detail === undefined ? null : <span class="figure-detail">{f.detail}</span>}
                </dd>
              </div>
            ))}
          </dl>
          <p class="hint">
            {title}, read <When iso={readAt(resource.data)} /> from storage (the same on every instance).
          </p>
        </>
      )}
    </div>
  );
}
