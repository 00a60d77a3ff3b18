// SHA-256 lives in core (the engine hashes partial conversions too); kept for existing includes.
#pragma once

#include "core/sha256.h"
