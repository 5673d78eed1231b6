#include "protocols/docker/engine/engine_instance.hpp"

#include <dirent.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace berth::docker_engine {

std::string engine_instance::describe() const {
  if (!known()) {
    return "an unknown dockerd instance";
  }
  auto started = " (started " + std::to_string(start_ticks) + " ticks after boot)";
  if (is_dockerd()) {
    return "dockerd pid " + std::to_string(pid) + started;
  }
  return "pid " + std::to_string(pid) + " " + (command.empty() ? "?" : command) +
         ", not dockerd: the socket is socket-activated" + started;
}

namespace {

/// pid's instance from /proc/PID/stat; unknown when it cannot be read.
engine_instance instance_of(int pid) {
  auto p = read_process_stat(pid);
  return engine_instance{p.pid, p.start_ticks, std::move(p.command)};
}

} // namespace

uint64_t peer_socket_inode(int socket_fd) {
  struct stat st{};
  if (fstat(socket_fd, &st) != 0) {
    return 0;
  }
  int nl = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0) {
    return 0;
  }
  struct {
    nlmsghdr head;
    unix_diag_req req;
  } msg{};
  msg.head.nlmsg_len = sizeof msg;
  msg.head.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.head.nlmsg_flags = NLM_F_REQUEST;
  msg.req.sdiag_family = AF_UNIX;
  msg.req.udiag_states = ~0u;
  msg.req.udiag_ino = static_cast<uint32_t>(st.st_ino);
  msg.req.udiag_show = UDIAG_SHOW_PEER;
  msg.req.udiag_cookie[0] = ~0u; // INET_DIAG_NOCOOKIE: any socket of that inode
  msg.req.udiag_cookie[1] = ~0u;
  sockaddr_nl to{};
  to.nl_family = AF_NETLINK;
  uint64_t peer = 0;
  if (::sendto(nl, &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
      static_cast<ssize_t>(sizeof msg)) {
    alignas(nlmsghdr) char buf[8192];
    auto n = ::recv(nl, buf, sizeof buf, 0);
    auto* h = reinterpret_cast<nlmsghdr*>(buf);
    if (n > 0 && NLMSG_OK(h, static_cast<unsigned>(n)) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
      auto* m = reinterpret_cast<unix_diag_msg*>(NLMSG_DATA(h));
      auto* attr = reinterpret_cast<rtattr*>(m + 1);
      int left = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
      for (; RTA_OK(attr, left); attr = RTA_NEXT(attr, left)) {
        if (attr->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(attr) >= sizeof(uint32_t)) {
          peer = *reinterpret_cast<const uint32_t*>(RTA_DATA(attr));
        }
      }
    }
  }
  ::close(nl);
  return peer;
}

int holder_of_socket(uint64_t inode) {
  if (inode == 0) {
    return 0;
  }
  auto want = "socket:[" + std::to_string(inode) + "]";
  int self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (!proc) {
    return 0;
  }
  int found = 0;
  while (found == 0) {
    auto* e = ::readdir(proc);
    if (!e) {
      break;
    }
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self) {
      continue;
    }
    auto dir = std::string{"/proc/"} + e->d_name + "/fd";
    DIR* fds = ::opendir(dir.c_str());
    if (!fds) {
      continue;
    }
    while (auto* f = ::readdir(fds)) {
      char target[64];
      auto len = ::readlink((dir + "/" + f->d_name).c_str(), target, sizeof target - 1);
      if (len > 0 && std::string{target, static_cast<size_t>(len)} == want) {
        found = static_cast<int>(pid);
        break;
      }
    }
    ::closedir(fds);
  }
  ::closedir(proc);
  return found;
}

engine_instance peer_instance(int socket_fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
    return {};
  }
  auto listener = instance_of(cred.pid);
  if (listener.is_dockerd()) {
    return listener;
  }
  // Socket activation: the listener is systemd; dockerd holds the accepted end.
  auto holder = instance_of(holder_of_socket(peer_socket_inode(socket_fd)));
  return holder.known() ? holder : listener;
}

} // namespace berth::docker_engine
