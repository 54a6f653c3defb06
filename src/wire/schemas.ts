// Wire types shared by every module: the REST error body and list query parameters.
import { Type } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  {
    status_code: Type.Integer(),
    error_type: Type.String(),
    message: Type.String(),
    validation_errors: Type.Array(Type.Object({ error_type: Type.String(), location: Type.String(), message: Type.String() })),
    request_id: Type.String(),
    more_info: Type.String(),
  },
  { $id: 'ErrorBody' },
);

export const LIST_LIMIT_MAX = 1000;

export const ListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_MAX }),
  cursor: Type.Optional(Type.String({ maxLength: 2048 })),
});
