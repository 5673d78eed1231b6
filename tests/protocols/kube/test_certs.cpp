#include "tests/protocols/kube/test_certs.hpp"

#include <memory>
#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace berth::test {

namespace {

using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using x509_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

void check(bool ok, const char* what) {
  if (!ok) {
    throw std::runtime_error(std::string{"test_certs: "} + what + " failed");
  }
}

key_ptr new_key() {
  key_ptr key{EVP_EC_gen("P-256"), EVP_PKEY_free};
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

std::string pem_of(X509* cert) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new(BIO_s_mem()), BIO_free};
  check(PEM_write_bio_X509(bio.get(), cert) == 1, "PEM_write_bio_X509");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return {data, static_cast<size_t>(n)};
}

std::string pem_of(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new(BIO_s_mem()), BIO_free};
  check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return {data, static_cast<size_t>(n)};
}

key_ptr key_of(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                BIO_free};
  key_ptr key{PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free};
  check(key != nullptr, "PEM_read_bio_PrivateKey");
  return key;
}

x509_ptr cert_of(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                BIO_free};
  x509_ptr cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free};
  check(cert != nullptr, "PEM_read_bio_X509");
  return cert;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "X509V3_EXT_conf_nid");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

x509_ptr new_cert(const std::string& cn, EVP_PKEY* key) {
  x509_ptr cert{X509_new(), X509_free};
  X509_set_version(cert.get(), 2);
  unsigned char serial[8];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

} // namespace

cert_pair make_ca(const std::string& common_name) {
  auto key = new_key();
  auto cert = new_cert(common_name, key.get());
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  add_ext(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_ext(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_ext(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "X509_sign");
  return {pem_of(cert.get()), pem_of(key.get())};
}

cert_pair issue_cert(const cert_pair& ca, const std::string& common_name,
                     const std::vector<std::string>& sans) {
  auto ca_key = key_of(ca.key_pem);
  auto ca_cert = cert_of(ca.cert_pem);
  auto key = new_key();
  auto cert = new_cert(common_name, key.get());
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  add_ext(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_ext(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  add_ext(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth,clientAuth");
  if (!sans.empty()) {
    std::string list;
    for (const auto& s : sans) {
      list += (list.empty() ? "" : ",") + s;
    }
    add_ext(cert.get(), ca_cert.get(), NID_subject_alt_name, list);
  }
  check(X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0, "X509_sign");
  return {pem_of(cert.get()), pem_of(key.get())};
}

} // namespace berth::test
