// OpenFiles: the inodes this client has open (one InodeState per inode,
// shared by its Files) and the attribute overlay that makes every answer
// with attributes include what those Files changed and did not commit yet.
//
// - Overlay (WithOpenState): size and mtime of this client's uncommitted
//   writes, and a passthrough writer's chunk file (the kernel writes it
//   behind our back: it is the file while held). The kernel takes the size
//   of a LOOKUP or READDIRPLUS answer as it takes GETATTR's, so all of them
//   pass through here.
// - Attribute cache: the attributes meta last gave for an open inode
//   (InodeState::meta_attr), and those of a directory this client just
//   changed (NoteDirChanged); GetAttr answers from them for up to
//   `attr_cache`, with the overlay. Namespace changes of this client forget
//   them (they may change nlink or ctime).
//
// Locks: inodes_mu_ guards the table and InodeState::open_files; it is
// taken before any InodeState::mu, and neither is held across a meta call.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "client/inode_state.h"
#include "client/meta_api.h"

namespace t0fs::client {

class OpenFiles {
 public:
  OpenFiles(MetaApi& meta, Duration attr_cache) : meta_(meta), attr_cache_(attr_cache) {}

  // The InodeState of a File being opened (created at the first), counted
  // until Forget; `writable` upgrades its layout's capabilities.
  std::shared_ptr<InodeState> Acquire(const Attr& attr, bool writable);
  // Whether that was the inode's last File here (st is then no longer found).
  bool Forget(const std::shared_ptr<InodeState>& st);
  // The InodeState of `ino` if a File of this client has it open.
  std::shared_ptr<InodeState> Find(InodeId ino);

  // Attributes of `ino`: from the cache while fresh, else from meta; with
  // the overlay.
  Result<Attr> GetAttr(InodeId ino);
  // Attributes meta just gave: cached if the inode is open, with the overlay.
  Attr FromMeta(const Attr& attr);
  // `attr` (from meta) with what this client's open Files changed and did
  // not commit yet.
  Attr WithOpenState(Attr attr);
  static void NoteMetaAttr(InodeState& st, const Attr& attr);
  // A directory's attributes as meta returned them with a change this
  // client made in it (a create): the kernel drops its cached attributes of
  // the directory at such a change and asks again (for the permission check
  // of the next lookup); GetAttr answers that from here for `attr_cache`.
  void NoteDirChanged(const Attr& dir);
  // Forget the cached attributes of `ino` (open file or directory), or of all.
  void ForgetMetaAttr(InodeId ino);
  void ForgetMetaAttrs();

 private:
  MetaApi& meta_;
  const Duration attr_cache_;
  std::mutex inodes_mu_;  // guards inodes_ (taken before any InodeState::mu)
  std::unordered_map<InodeId, std::weak_ptr<InodeState>> inodes_;
  struct DirAttr {
    Attr attr;
    std::chrono::steady_clock::time_point at;
  };
  std::mutex dirs_mu_;  // guards dirs_ (taken alone)
  std::unordered_map<InodeId, DirAttr> dirs_;
};

}  // namespace t0fs::client
