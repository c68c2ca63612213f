/**
 * The planner's defaults on their own, without the planner: `cairn rings --help` shows them and
 * need not load the rings code (and the domain's validation) to do so.
 */

/** The ring host's Python that has Swift: Debian's and Ubuntu's swift packages install into it. */
export const DEFAULT_SWIFT_PYTHON = '/usr/bin/python3';

/** Most partitions one step may move, in percent. */
export const DEFAULT_MAX_MOVE_PCT = 5;
