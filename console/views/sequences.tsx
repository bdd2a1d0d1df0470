/** Sequences: high-water mark, block sizes, refills and 412 retries (of the instance that answered). */
import { tallyho } from '../api';
import { Num, Section, TableWrap, When } from '../components';
import { usePagedPolling } from '../hooks';
import { firstPages } from '../paging';

/**
 * How the numbers look, in words ("ORD-, 7 digits, check digit"): a made-up number such as
 * ORD-0000000-c reads like one the sequence could issue, and it cannot.
 */
function formatOf(settings: { prefix: string; width: number; checkDigit: boolean }): string {
  const parts = [settings.prefix === '' ? 'no prefix' : `"${settings.prefix}"`, `${settings.width} digits`];
  if (settings.checkDigit) parts.push('"-" and a check digit');
  return parts.join(', ');
}

export function SequencesView() {
  const list = usePagedPolling((pages, signal) => firstPages(tallyho().sequences.list({ signal }), pages), 5000, 'sequences');
  const items = list.data?.items ?? [];
  return (
    <Section
      id="sequences"
      title="Sequences"
      resource={list}
      count={items.length}
      empty="No sequences yet."
      intro={<p class="hint">Block statistics are those of the instance that answered; each instance keeps its own block.</p>}
      listing={{ of: list.data, what: 'sequences', more: list.more }}
    >
      <TableWrap label="Sequences">
        <table>
          <thead>
            <tr>
              <th scope="col">Sequence</th>
              <th scope="col" class="num">
                High-water mark
              </th>
              <th scope="col" class="num" title="The size of the block this instance reserved last">
                Newest block
              </th>
              <th scope="col" class="num" title="Numbers this instance holds: the rest of its current block and any block it prefetched">
                In hand
              </th>
              <th scope="col" class="num">
                Refills
              </th>
              <th scope="col" class="num">
                412 retries
              </th>
              <th scope="col">Last refill</th>
            </tr>
          </thead>
          <tbody>
            {items.map((s) => (
              <tr key={s.sequence} data-sequence={s.sequence}>
                <th scope="row">
                  {s.sequence}
                  <div class="muted small" data-testid="sequence-format">
                    {formatOf(s.settings)}
                  </div>
                </th>
                <td class="num" data-testid="sequence-hwm">
                  <Num value={s.highWaterMark} />
                </td>
                <td class="num" data-testid="sequence-block" title={`Bounds ${s.settings.blockSize.min}–${s.settings.blockSize.max}`}>
                  {s.instance === null ? (
                    <span class="muted">
                      {s.settings.blockSize.min}–{s.settings.blockSize.max}
                    </span>
                  ) : (
                    <Num value={s.instance.blockSize} />
                  )}
                </td>
                <td class="num" data-testid="sequence-remaining">
                  <Num value={s.instance?.remaining} />
                </td>
                <td class="num" data-testid="sequence-refills">
                  <Num value={s.instance?.refills} />
                </td>
                <td class="num" data-testid="sequence-412">
                  <Num value={s.instance?.retries412} />
                </td>
                <td>
                  <When iso={s.instance?.lastRefillAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </Section>
  );
}
