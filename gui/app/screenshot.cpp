// glReadPixels -> PNG through stb_image_write (libstb-dev: its library, which ImGui links anyway).
#include "gui/app/screenshot.hpp"

#include <GL/gl.h>
#include <stb_image_write.h>

#include <algorithm>
#include <vector>

namespace kwb::gui {

bool write_framebuffer_png(const std::filesystem::path& path, int x, int y, int width, int height,
                           int fb_height, std::string& error) {
  if (width <= 0 || height <= 0) {
    error = "nothing to write: empty rectangle";
    return false;
  }
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * height * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  // OpenGL's origin is bottom-left: read the rows from there, then flip them.
  glReadPixels(x, fb_height - y - height, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  if (const GLenum e = glGetError(); e != GL_NO_ERROR) {
    error = "glReadPixels failed (GL error " + std::to_string(e) + ")";
    return false;
  }
  std::vector<unsigned char> flipped(pixels.size());
  const std::size_t stride = static_cast<std::size_t>(width) * 3;
  for (int row = 0; row < height; ++row)
    std::copy_n(&pixels[(height - 1 - row) * stride], stride, &flipped[row * stride]);
  if (!stbi_write_png(path.c_str(), width, height, 3, flipped.data(), static_cast<int>(stride))) {
    error = "cannot write " + path.string();
    return false;
  }
  return true;
}

}  // namespace kwb::gui
