# The Ruby client as a gem: gem build crm_client.gemspec && gem install --local crm_client-0.1.0.gem
Gem::Specification.new do |spec|
  spec.name = 'crm_client'
  spec.version = '0.1.0'
  spec.summary = 'Official Ruby client of the CRM REST API v1 (standard library only)'
  spec.authors = ['CRM']
  spec.license = 'Nonstandard'
  spec.files = ['lib/crm_client.rb', 'lib/crm_client/resources.rb', 'README.md']
  spec.require_paths = ['lib']
  spec.required_ruby_version = '>= 3.0'
end
