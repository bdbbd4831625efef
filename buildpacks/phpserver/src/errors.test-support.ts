/** Renders the UserError a function throws, for snapshots. */
export { renderedUserError as rendered } from '../../../test/helpers/user-error.ts';
