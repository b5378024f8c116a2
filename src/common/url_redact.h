// URLs in messages and logs: a password in one is replaced by ***.
#pragma once

#include <string>
#include <string_view>

namespace t0fs {

// "postgresql://user:secret@host/db" → "postgresql://user:***@host/db";
// a URL without a password comes back as it is.
std::string RedactUrlPassword(std::string_view url);

}  // namespace t0fs
