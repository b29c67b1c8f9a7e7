from typing import Literal

TokenResponseTokenType = Literal["Bearer"]

TOKEN_RESPONSE_TOKEN_TYPE_VALUES: set[TokenResponseTokenType] = {
    "Bearer",
}


def check_token_response_token_type(value: str) -> TokenResponseTokenType:
    if value in TOKEN_RESPONSE_TOKEN_TYPE_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {TOKEN_RESPONSE_TOKEN_TYPE_VALUES!r}")
