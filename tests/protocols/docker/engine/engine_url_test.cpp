#include "protocols/docker/engine/engine_url.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;
using namespace berth::docker_engine;

namespace {

std::string refusal(const std::string& url) {
  auto r = parse_api_url(url);
  EXPECT_FALSE(r) << url << " was accepted as " << (r ? *r : "");
  if (r) {
    return {};
  }
  EXPECT_EQ(r.error(), ec::invalid_argument);
  return describe(r.error());
}

} // namespace

TEST(docker_engine_url, unix_paths) {
  EXPECT_EQ(parse_api_url(default_api_url).value(), "/var/run/docker.sock");
  EXPECT_EQ(parse_api_url("unix:///tmp/x/docker.sock").value(), "/tmp/x/docker.sock");
}

TEST(docker_engine_url, other_schemes_name_the_url_and_the_fix) {
  auto tcp = refusal("tcp://127.0.0.1:2375");
  EXPECT_NE(tcp.find("'tcp://127.0.0.1:2375'"), std::string::npos) << tcp;
  EXPECT_NE(tcp.find("only unix://"), std::string::npos) << tcp;
  EXPECT_NE(tcp.find("unix:///PATH"), std::string::npos) << tcp;
  EXPECT_NE(refusal("http://localhost/").find("http://"), std::string::npos);
  EXPECT_NE(refusal("npipe:////./pipe/docker_engine").find("npipe://"), std::string::npos);
  EXPECT_NE(refusal("/var/run/docker.sock").find("no scheme"), std::string::npos);
  EXPECT_NE(refusal("UNIX:///var/run/docker.sock").find("only unix://"), std::string::npos);
}

TEST(docker_engine_url, bad_paths) {
  EXPECT_NE(refusal("unix://").find("no socket path"), std::string::npos);
  EXPECT_NE(refusal("unix://docker.sock").find("absolute"), std::string::npos);
  EXPECT_NE(refusal("unix:///x.sock?timeout=3").find("query"), std::string::npos);
  EXPECT_NE(refusal(std::string{"unix:///a\0b", 11}).find("NUL"), std::string::npos);
  std::string long_path = "unix:///" + std::string(200, 'a');
  EXPECT_NE(refusal(long_path).find("more than a unix socket takes"), std::string::npos);
  // Exactly the longest path a sockaddr_un takes is accepted.
  EXPECT_TRUE(parse_api_url("unix:///" + std::string(106, 'a')));
  EXPECT_FALSE(parse_api_url("unix:///" + std::string(107, 'a')));
}

TEST(docker_engine_url, empty_is_refused_here_since_off_is_the_option_s_to_decide) {
  EXPECT_NE(refusal("").find("no scheme"), std::string::npos);
}
