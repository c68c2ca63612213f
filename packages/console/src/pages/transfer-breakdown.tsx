import { ScrollBox, TableHead } from '../components';
import { bytesTitle, formatBytes } from '../lib/format';
import { CLASS_HEADINGS, transferBreakdown, type TransferFigures, type TransferShare } from '../lib/utilization';

function ShareRow({ share }: { share: TransferShare }) {
  return (
    <tr data-share={share.label}>
      <th scope="row">{share.label}</th>
      <td class="num" data-raw={String(share.bytes_in)} title={bytesTitle(share.bytes_in)}>
        {formatBytes(share.bytes_in)}
      </td>
      <td class="num" data-raw={String(share.bytes_out)} title={bytesTitle(share.bytes_out)}>
        {formatBytes(share.bytes_out)}
      </td>
      <td class="num" data-raw={String(share.req_count)}>
        {share.req_count.toLocaleString()}
      </td>
    </tr>
  );
}

/**
 * A range's transfer as a provider bills it (docs/utilization.md): requests by class, failed ones
 * among them, and bytes and requests through the Swift API and S3, from internal networks and the
 * rest.
 */
export function TransferBreakdown({ figures, caption }: { figures: TransferFigures; caption: string }) {
  const b = transferBreakdown(figures);
  return (
    <div class="breakdown">
      <ScrollBox label="Requests by class">
        <table class="classes">
          <caption>Requests by class, {caption}</caption>
          <TableHead row="Requests" nums={[...b.classes.map((c) => CLASS_HEADINGS[c.cls]), 'Failed']} />
          <tbody>
            <tr>
              <th scope="row">Count</th>
              {b.classes.map((c) => (
                <td class="num" data-class={c.cls}>
                  {c.count.toLocaleString()}
                </td>
              ))}
              <td class="num" data-class="errors">
                {b.errors.toLocaleString()}
              </td>
            </tr>
          </tbody>
        </table>
      </ScrollBox>
      {b.unclassified > 0 ? (
        <p class="hint">
          {b.unclassified.toLocaleString()} {b.unclassified === 1 ? 'request is' : 'requests are'} in the totals only:
          hours recorded before requests were metered by class, API and network count in no class, and as the Swift
          API's and external traffic.
        </p>
      ) : null}
      <ScrollBox label="By API and by network">
        <table class="shares">
          <caption>By API and by network, {caption}</caption>
          <TableHead row="Traffic" nums={['In', 'Out', 'Requests']} />
          <tbody>
            {[...b.apis, ...b.networks].map((share) => (
              <ShareRow share={share} />
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </div>
  );
}
