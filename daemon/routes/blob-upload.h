// POST /api/blobs/:digest: the body streams to disk while it is hashed (store/blob-writer.h), in
// 1 MiB chunks through a writer thread, so an upload of any size holds two chunks of memory. No
// cap but the free space: a Content-Length larger than the free space is refused at once, a disk
// that fills up mid-way ends in 507; a digest mismatch is a 400. Nothing is kept on any error.
// An existing blob answers 200 without reading the body.
#pragma once

#include "http/message.h"

namespace nurl {

class Store;

http::Reply blob_upload(Store& store, const http::Request& req);

}  // namespace nurl
