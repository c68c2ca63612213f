import Joi from 'joi';
import { errors } from './errors';
import { escapeHtml, truncateName } from './escape';
import { protoKeyLabels } from './proto-keys';

/**
 * A cluster's device report (PUT /api/v1/clusters/<id>/devices/): its storage policies and every
 * device with the policies whose object rings list it and its usage. Validated as a whole: every
 * bad entry is named by its index, and nothing is written unless all of it is good.
 */
export interface ReportedPolicy {
  index: number;
  name: string;
  default: boolean;
}

export interface ReportedDevice {
  node: string;
  device: string;
  /** Policy names, as sent. */
  policies: string[];
  sizeBytes: number | null;
  /** Null when the device reports no usage (unmounted, or its node could not be read). */
  usedBytes: number | null;
  availBytes: number | null;
  mounted: boolean;
}

export interface DeviceReport {
  policies: ReportedPolicy[];
  devices: ReportedDevice[];
}

export const MAX_REPORTED_DEVICES = 1_000_000;
const MAX_PROBLEMS_SHOWN = 50;

// eslint-disable-next-line no-control-regex
const NAME = /^[^\u0000-\u001f\u007f]{1,255}$/;
const bytes = Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).allow(null);

const policySchema = Joi.object({
  index: Joi.number().integer().min(0).max(2147483647).required(),
  // Swift's own rule for policy names; it also keeps ring set names ("gold,silver") unambiguous.
  name: Joi.string()
    .pattern(/^[A-Za-z0-9-]{1,255}$/)
    .message('{{#label}} must be 1 to 255 letters, digits or "-" (Swift\'s rule for policy names)')
    .required(),
  default: Joi.boolean().default(false),
});

// A device name is a path segment under /srv/node: no slash, no control character.
// eslint-disable-next-line no-control-regex
const DEVICE_NAME = /^[^/\u0000-\u001f\u007f]{1,255}$/;

const deviceSchema = Joi.object({
  node: Joi.string().pattern(NAME).required(),
  device: Joi.string().pattern(DEVICE_NAME).required(),
  policies: Joi.array().items(Joi.string()).max(64).required(),
  used_bytes: bytes,
  avail_bytes: bytes,
  size_bytes: bytes,
  mounted: Joi.boolean().default(true),
});

const reportSchema = Joi.object({
  policies: Joi.array().items(policySchema).min(1).max(1000).required(),
  devices: Joi.array().items(deviceSchema).max(MAX_REPORTED_DEVICES).required(),
});

const MESSAGES = {
  'any.required': '{{#label}} is required',
  'number.base': '{{#label}} must be an integer number of bytes or null',
  'number.integer': '{{#label}} must be an integer',
  'number.min': '{{#label}} must not be negative',
  'number.max': '{{#label}} is too large',
  'string.base': '{{#label}} must be a string',
  'string.empty': '{{#label}} must not be empty',
  'string.pattern.base':
    '{{#label}} must be 1 to 255 characters without control characters (and no "/" in a device name)',
  'array.base': '{{#label}} must be a list',
  'array.min': '{{#label}} must list at least one storage policy',
  'array.max': '{{#label}} has too many entries',
  'object.base': '{{#label}} must be an object',
  'object.unknown': '{{#label}} is not a known field',
  'boolean.base': '{{#label}} must be true or false',
};

interface RawDevice {
  node: string;
  device: string;
  policies: string[];
  used_bytes?: number | null;
  avail_bytes?: number | null;
  size_bytes?: number | null;
  mounted: boolean;
}

function fail(problems: string[]): never {
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map(escapeHtml);
  const more = problems.length > shown.length ? `; and ${problems.length - shown.length} more` : '';
  throw errors.invalidInput(`Invalid device report: ${shown.join('; ')}${more}.`, { problems: problems.length });
}

export function validateDeviceReport(body: unknown): DeviceReport {
  const { error, value } = reportSchema.validate(body, {
    abortEarly: false,
    convert: false,
    messages: MESSAGES,
    errors: { wrap: { label: false } },
  });
  const proto = protoKeyLabels(body).map((label) => `${truncateName(label)} is not a known field`);
  // Labels are paths of keys the client sent; a long one is cut.
  const shown = (error?.details ?? []).map((d) =>
    d.context?.label ? d.message.split(d.context.label).join(truncateName(d.context.label)) : d.message,
  );
  if (error || proto.length > 0) fail([...shown, ...proto]);
  const raw = value as { policies: ReportedPolicy[]; devices: RawDevice[] };

  const problems: string[] = [];
  const byName = new Map<string, ReportedPolicy>();
  // Swift matches policy names without regard to case and refuses two that differ only in case.
  const firstByFolded = new Map<string, number>();
  const indexes = new Set<number>();
  raw.policies.forEach((p, i) => {
    const folded = p.name.toLowerCase();
    const first = firstByFolded.get(folded);
    if (first !== undefined) {
      const other = raw.policies[first]!.name;
      problems.push(
        other === p.name
          ? `policies[${i}]: the name '${p.name}' appears twice`
          : `policies[${i}]: the name '${p.name}' is the name '${other}' of policies[${first}] in another case (Swift's policy names ignore case)`,
      );
    } else firstByFolded.set(folded, i);
    if (indexes.has(p.index)) problems.push(`policies[${i}]: the index ${p.index} appears twice`);
    byName.set(p.name, p);
    indexes.add(p.index);
  });
  if (raw.policies.filter((p) => p.default).length > 1) problems.push('policies: more than one is marked default');

  const seen = new Map<string, number>();
  const devices: ReportedDevice[] = raw.devices.map((d, i) => {
    const key = `${d.node}\u0000${d.device}`;
    const first = seen.get(key);
    if (first !== undefined)
      problems.push(`devices[${i}]: duplicate node+device '${d.node}/${d.device}' (also devices[${first}])`);
    else seen.set(key, i);
    for (const name of d.policies) if (!byName.has(name)) problems.push(`devices[${i}]: unknown policy '${name}'`);
    const used = d.used_bytes ?? null;
    const avail = d.avail_bytes ?? null;
    if (d.mounted && (used === null || avail === null)) {
      problems.push(
        `devices[${i}]: a mounted device needs used_bytes and avail_bytes (send "mounted": false for a device without usage)`,
      );
    }
    const reported = d.mounted && used !== null && avail !== null;
    return {
      node: d.node,
      device: d.device,
      policies: d.policies,
      sizeBytes: d.size_bytes ?? null,
      usedBytes: reported ? used : null,
      availBytes: reported ? avail : null,
      mounted: d.mounted,
    };
  });
  if (problems.length > 0) fail(problems);
  return { policies: raw.policies, devices };
}
