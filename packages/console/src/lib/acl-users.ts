/**
 * User names typed for a container ACL, one per line or separated by commas, as the API takes them:
 * a list without blanks or repeats. A user name itself may hold neither (the API would refuse it).
 */
export function usersOf(text: string): string[] {
  const names = text
    .split(/[\n,]/)
    .map((n) => n.trim())
    .filter(Boolean);
  return [...new Set(names)];
}
