/** spdx-license-ids ships a JSON array of SPDX license ids and no types. */
declare module 'spdx-license-ids' {
  const ids: string[];
  export default ids;
}
