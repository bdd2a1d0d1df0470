/** Pieces every view uses: error notices, confirmation, refresh bar, times and numbers. */
import type { ComponentChildren } from 'preact';
import { useId, useRef } from 'preact/hooks';

import { ApiError, refusedDetail } from './api';
import { type Resource, useNow } from './hooks';
import type { Listing } from './types';

export function ProblemNotice({ error, onDismiss }: { error: Error | undefined; onDismiss?: () => void }) {
  if (error === undefined) return null;
  const problem = error instanceof ApiError ? error.problem : undefined;
  const status = error instanceof ApiError && error.status !== 0 ? error.status : undefined;
  const detail = problem?.detail ?? (error instanceof ApiError ? refusedDetail(error) : undefined) ?? error.message;
  return (
    <div class="problem" role="alert">
      <p class="problem-title">
        {status === undefined ? 'Request failed' : `${status} ${problem?.title ?? ''}`}
        {problem?.code === undefined ? null : <code class="problem-code">{problem.code}</code>}
      </p>
      <p>{detail}</p>
      {problem?.issues !== undefined && problem.issues.length > 0 ? (
        <ul class="problem-issues">
          {problem.issues.map((issue) => (
            <li key={issue.path}>
              <code>{issue.path}</code>: {issue.message}
            </li>
          ))}
        </ul>
      ) : null}
      {error instanceof ApiError && error.retryAfterMs !== undefined ? <p>Retry after {Math.ceil(error.retryAfterMs / 1000)} s.</p> : null}
      {error instanceof ApiError ? <p class="muted">{error.request}</p> : null}
      {onDismiss === undefined ? null : (
        <button type="button" class="link" onClick={onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}

export interface ConfirmProps {
  readonly label: string;
  /** The accessible name of the button when the visible label is not enough (e.g. "Release gate launch"). */
  readonly ariaLabel?: string;
  readonly title: string;
  readonly message: ComponentChildren;
  readonly confirmLabel: string;
  readonly danger?: boolean;
  readonly disabled?: boolean;
  readonly onConfirm: () => void;
}

/** A button that asks first, in a modal dialog (Esc or Cancel backs out; Cancel has the focus). */
export function ConfirmButton(props: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  return (
    <>
      <button
        type="button"
        class={props.danger === true ? 'danger' : undefined}
        aria-label={props.ariaLabel}
        disabled={props.disabled}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} class="confirm" aria-labelledby={titleId}>
        <h3 id={titleId}>{props.title}</h3>
        <div class="confirm-message">{props.message}</div>
        <div class="actions">
          <button type="button" autofocus onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button
            type="button"
            class={props.danger === true ? 'danger' : 'primary'}
            onClick={() => {
              dialog.current?.close();
              props.onConfirm();
            }}
          >
            {props.confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });

/** The distance to a time in the largest unit that fits ("in 3 yr.", "2 mo. ago", "in 5 min"). */
function describeAge(iso: string | number, now: number): string {
  const ms = (typeof iso === 'number' ? iso : Date.parse(iso)) - now;
  const abs = Math.abs(ms);
  if (abs < 1000) return 'now';
  if (abs < 60_000) return relative.format(Math.round(ms / 1000), 'second');
  if (abs < 3_600_000) return relative.format(Math.round(ms / 60_000), 'minute');
  if (abs < 86_400_000) return relative.format(Math.round(ms / 3_600_000), 'hour');
  if (abs < 45 * 86_400_000) return relative.format(Math.round(ms / 86_400_000), 'day');
  if (abs < 365 * 86_400_000) return relative.format(Math.round(ms / (30.44 * 86_400_000)), 'month');
  return relative.format(Math.round(ms / (365.25 * 86_400_000)), 'year');
}

const dateTime = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

/**
 * A time as "in 5 min" / "3 sec. ago", with the exact time in the tooltip and the markup. With
 * `dated`, the date and time come first and the distance follows ("15 Jan 2030, 09:00 (in 3 yr.)"):
 * for a time a reader plans by, not one they only want to know the age of.
 */
export function When({ iso, empty = '—', dated = false }: { iso: string | null | undefined; empty?: string; dated?: boolean }) {
  const now = useNow(5000);
  if (iso === null || iso === undefined || Number.isNaN(Date.parse(iso))) return <span class="muted">{empty}</span>;
  const exact = new Date(iso).toLocaleString();
  return (
    <time dateTime={iso} title={exact}>
      {dated ? `${dateTime.format(new Date(iso))} (${describeAge(iso, now)})` : describeAge(iso, now)}
    </time>
  );
}

const integer = new Intl.NumberFormat('en');

export function Num({ value }: { value: number | null | undefined }) {
  return <span class="num">{value === null || value === undefined ? '—' : integer.format(value)}</span>;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** A section's heading with its refresh button and when it last loaded. */
function SectionHeader({
  id,
  title,
  resource,
  children,
}: {
  id: string;
  title: string;
  resource: Resource<unknown>;
  children?: ComponentChildren;
}) {
  const now = useNow(1000);
  return (
    <header class="section-header">
      <h2 id={id}>{title}</h2>
      <div class="section-tools">
        {children}
        <span class="muted" aria-live="off">
          {resource.updatedAt === undefined ? (resource.loading ? 'Loading…' : '') : `Updated ${describeAge(resource.updatedAt, now)}`}
        </span>
        <button type="button" onClick={resource.refresh} disabled={resource.loading} aria-label={`Refresh ${title.toLowerCase()}`}>
          Refresh
        </button>
      </div>
    </header>
  );
}

/** A wide table that scrolls sideways on narrow screens (focusable, so the keyboard can scroll it). */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export interface SectionProps {
  /** Also the id prefix of the heading. */
  readonly id: string;
  readonly title: string;
  readonly resource: Resource<unknown>;
  /** How many entries loaded; 0 shows `empty` once the first load answered. */
  readonly count: number;
  readonly empty: ComponentChildren;
  /** Controls beside the heading's refresh button. */
  readonly tools?: ComponentChildren;
  /** Shown above the load error (e.g. a form that changes what is loaded). */
  readonly intro?: ComponentChildren;
  /** The listing behind the section, for its unreadable entries and its next page (`more` reads it). */
  readonly listing?: { readonly of: Listing<unknown> | undefined; readonly what: string; readonly more: () => void };
  readonly children: ComponentChildren;
}

/** Entries of a listing whose stored state could not be read, and a way to the next page. */
function Unreadable({ listing, what, more }: { listing: Listing<unknown> | undefined; what: string; more: () => void }) {
  if (listing === undefined) return null;
  return (
    <>
      {listing.unreadable.length > 0 ? (
        <div class="problem" role="alert">
          <p class="problem-title">Unreadable {what}</p>
          <ul>
            {listing.unreadable.map((u) => (
              <li key={u.name}>
                <strong>{u.name}</strong>: {u.detail}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {listing.more ? (
        <p class="hint">
          Showing the first {listing.items.length} {what}.{' '}
          <button type="button" onClick={more}>
            Show more
          </button>
        </p>
      ) : null}
    </>
  );
}

/** A console section: heading with refresh, the load error, an empty state, then the content. */
export function Section(props: SectionProps) {
  const titleId = `${props.id}-title`;
  return (
    <section aria-labelledby={titleId}>
      <SectionHeader id={titleId} title={props.title} resource={props.resource}>
        {props.tools}
      </SectionHeader>
      {props.intro}
      <ProblemNotice error={props.resource.error} />
      {props.resource.data !== undefined && props.count === 0 ? <Empty>{props.empty}</Empty> : null}
      {props.count > 0 ? props.children : null}
      {props.listing === undefined ? null : <Unreadable listing={props.listing.of} what={props.listing.what} more={props.listing.more} />}
    </section>
  );
}
