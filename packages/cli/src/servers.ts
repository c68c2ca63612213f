/**
 * The two servers' packages, loaded by the commands that need them and only when they run. They
 * bring express, knex, pg, PGlite and the rest; loading them up front made every client command
 * (`cairn users list`, `cairn --version`) pay for them, about half a second per call in a script.
 */
export const managementApi = () => import('@cairn/management-api');
export const authGateway = () => import('@cairn/auth-gateway');
